//! `cargo xtask abi-check`: proves that what `libcann_sim.so` exports matches
//! the real CANN declarations.
//!
//! It generates a C++ program from the checked-in bindings and the C++ of
//! `xtask/abi/` (see its README), compiles it against the real headers (the
//! torch-npu wheel's, see `headers.rs`), links it to the cann-sim cdylib and
//! runs it:
//!
//! 1. **Exports.** The address of every function of the AscendCL and HCCL
//!    bindings is taken through a pointer of the type the bindings declare,
//!    spelled in C++. The compiler rejects the program when that type differs
//!    from the header's declaration; the linker rejects it when
//!    `libcann_sim.so` lacks the symbol; at run time `dladdr` confirms that
//!    each one resolved into `libcann_sim.so`. (cann-sim's exports are tied to
//!    the bindings' types by the Rust compiler: `cann-sim/src/tables.rs`.)
//!    DCMI has no public header: its exports are only looked up by name.
//! 2. **Behaviour.** Every function cann-sim implements (an `extern "C" fn` in
//!    `cann-sim/src/{acl,hccl}/`) must have a check in
//!    `xtask/abi/checks/*.cpp` (see `abi_checks.rs`), calling it through the
//!    header's declaration with real arguments; an implemented function
//!    without one stops the check before anything is compiled.
//! 3. **Not supported.** One function of each library that cann-sim does not
//!    implement is called: it must return the library's "not supported" code
//!    and leave a message naming itself in `aclGetRecentErrMsg`.
//! 4. **`HcclCommConfigInit`** (inline in `hccl.h`, not exported) runs on a
//!    zero-filled and on a 0xAB-filled `HcclCommConfig`; the bytes must equal
//!    those of `hccl_sys::comm_config_init` (and the values those of
//!    `hccl_sys::comm_config_default()`).
//!
//! The compiler is `$CXX` (default `g++`). The program and its source are left
//! in `<target>/abi-check/` for inspection.

use crate::abi_checks::{self, Check};
use crate::sim_exports::{api_functions, implemented};
use crate::workspace_root;
use cann_codegen::headers::HeaderDirs;
use hccl_sys::HcclCommConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the generated programs start with (this one and `abi_release.rs`'s).
pub(crate) const COMMON: (&str, &str) = ("xtask/abi/common.hpp", include_str!("../abi/common.hpp"));

/// The fixed part of the generated program, after [`COMMON`].
const PREAMBLE: (&str, &str) = (
    "xtask/abi/preamble.cpp",
    include_str!("../abi/preamble.cpp"),
);

/// The simulated machine the program runs on (its environment).
const DEVICES: u32 = 2;
const HBM_MIB: u64 = 1024;
const SOC_NAME: &str = "Ascend910B1";

/// How long the program may run.
const TIMEOUT: Duration = Duration::from_secs(120);

/// One library with a header.
struct Lib {
    /// Shown in the output.
    label: &'static str,
    /// Checked-in bindings, relative to the workspace root.
    bindings: &'static str,
    /// cann-sim's module, relative to the workspace root.
    sim_dir: &'static str,
    /// The return type of functions that answer a status code.
    status_type: &'static str,
    /// The header's name for "not supported".
    not_supported: &'static str,
    /// Unimplemented functions probed by name, besides the library's first
    /// one: each must answer `not_supported` and name itself in
    /// `aclGetRecentErrMsg` (one per area cann-sim declares but leaves out).
    named_probes: &'static [&'static str],
}

const LIBS: [Lib; 2] = [
    Lib {
        label: "ACL",
        bindings: "acl-sys/src/bindings.rs",
        sim_dir: "cann-sim/src/acl",
        status_type: "aclError",
        not_supported: "ACL_ERROR_API_NOT_SUPPORT",
        named_probes: &[],
    },
    Lib {
        label: "HCCL",
        bindings: "hccl-sys/src/bindings.rs",
        sim_dir: "cann-sim/src/hccl",
        status_type: "HcclResult",
        not_supported: "HCCL_E_NOT_SUPPORT",
        named_probes: &[],
    },
];

/// The bindings whose functions abi-check compiles against a header (every
/// function's type is checked, not only those with a behavioural check).
pub(crate) fn header_bindings() -> impl Iterator<Item = &'static str> {
    LIBS.iter().map(|lib| lib.bindings)
}

/// DCMI: no header, so only the names are checked.
const DCMI_BINDINGS: &str = "dcmi-sys/src/bindings.rs";

/// Functions of the headers that no library exports.
pub(crate) const INLINE: &[(&str, &str)] = &[(
    "HcclCommConfigInit",
    "inline in hccl.h, not exported by libhccl.so (compared byte for byte below)",
)];

pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let header_root = match args {
        [] => crate::headers::fetch(&root)?,
        [flag, dir] if flag == "--headers" => PathBuf::from(dir),
        [flag, version] if flag == "--release" => crate::headers::fetch_version(&root, version)?,
        _ => {
            return Err(
                "usage: cargo xtask abi-check [--headers DIR | --release TORCH_NPU_VERSION]".into(),
            );
        }
    };
    if !args.is_empty() {
        // Another release's headers: the ABI check of abi_release.rs, unless
        // they declare exactly what the bindings declare.
        let source = crate::abi_release::HeaderSource::find(&header_root)?;
        if crate::abi_release::run(&root, &source)? {
            return Ok(());
        }
    }
    let started = Instant::now();
    let dirs = HeaderDirs::find(&header_root)?;
    let plan = Plan::new(&root)?;

    let lib = build_sim()?;
    let lib_dir = lib
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", lib.display()))?;
    let out_dir = lib_dir.parent().unwrap_or(lib_dir).join("abi-check");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    println!(
        "abi-check: headers {} (ACL {}), library {}",
        header_root.display(),
        dirs.acl_version().unwrap_or_else(|| "?".into()),
        lib.display()
    );

    let source = out_dir.join("abi_check.cpp");
    let program = generate(&plan, &source)?;
    std::fs::write(&source, &program.text).map_err(|e| format!("{}: {e}", source.display()))?;
    let exe = out_dir.join("abi_check");
    compile(&dirs, &source, &exe, lib_dir, &program.export_lines)?;
    let kernel = compile_kernel(&out_dir)?;

    let output = execute(&exe, &kernel)?;
    let mut exports = None;
    let mut checked = None;
    let mut failed: Option<usize> = None;
    let mut configs = BTreeMap::new();
    let mut last_group = None;
    for line in output.stdout.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("@start") => last_group = line.strip_prefix("@start ").map(str::to_string),
            Some("@exports") => exports = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some("@checked") => checked = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some("@failed") => failed = words.next().and_then(|w| w.parse::<usize>().ok()),
            Some(tag @ ("@config-zero" | "@config-ab")) => {
                let size = words.next().and_then(|w| w.parse::<usize>().ok());
                let bytes = words.next().map(unhex).transpose()?;
                configs.insert(tag.to_string(), (size, bytes));
            }
            _ => println!("{line}"),
        }
    }
    if !output.status.success() && failed.is_none_or(|f| f == 0) {
        return Err(format!(
            "{} did not finish ({}){}{}",
            exe.display(),
            describe_status(&output.status),
            last_group
                .map(|g| format!(" during the check group `{g}`"))
                .unwrap_or_default(),
            if output.stderr.trim().is_empty() {
                String::new()
            } else {
                format!("; its stderr:\n{}", output.stderr.trim_end())
            }
        ));
    }
    if !output.stderr.trim().is_empty() {
        println!("  (stderr of the program)\n{}", output.stderr.trim_end());
    }
    let (Some(exports), Some(checked), Some(mut failed)) = (exports, checked, failed) else {
        return Err(format!(
            "{} printed no summary ({})",
            exe.display(),
            describe_status(&output.status)
        ));
    };

    let config_ok = match compare_configs(&configs) {
        Ok(line) => {
            println!("  ok    {line}");
            true
        }
        Err(e) => {
            println!("  FAIL  HcclCommConfigInit: {e}");
            failed += 1;
            false
        }
    };
    println!(
        "abi-check: {exports} exports linked, {checked} implemented functions checked, \
         HcclCommConfigInit {}; {failed} failed ({:.1} s)",
        if config_ok { "identical" } else { "DIFFERS" },
        started.elapsed().as_secs_f64()
    );
    if failed > 0 {
        return Err(format!(
            "{failed} ABI check group(s) failed (program: {})",
            source.display()
        ));
    }
    Ok(())
}

/// One C function of a library with a header.
pub(crate) struct Function {
    pub(crate) decl: syn::ForeignItemFn,
    pub(crate) name: String,
}

/// What the program covers, read from the bindings and cann-sim's sources.
pub(crate) struct Plan {
    /// Per library (as [`LIBS`]): every function of its bindings.
    pub(crate) libs: Vec<Vec<Function>>,
    /// Per library: the functions cann-sim implements.
    implemented: Vec<BTreeSet<String>>,
    /// Type aliases of all bindings: name → aliased type.
    aliases: BTreeMap<String, syn::Type>,
    /// DCMI functions (by name only).
    dcmi: Vec<String>,
    /// DCMI functions cann-sim implements.
    dcmi_implemented: usize,
    /// The behavioural checks, in running order.
    checks: Vec<Check>,
}

impl Plan {
    pub(crate) fn new(root: &Path) -> Result<Plan, String> {
        let mut libs = Vec::new();
        let mut implemented_sets = Vec::new();
        let mut aliases = BTreeMap::new();
        for lib in &LIBS {
            let text = read(&root.join(lib.bindings))?;
            collect_aliases(&text, &mut aliases).map_err(|e| format!("{}: {e}", lib.bindings))?;
            let functions = api_functions(&text)
                .map_err(|e| format!("{}: {e}", lib.bindings))?
                .into_iter()
                .map(|decl| Function {
                    name: decl.sig.ident.to_string(),
                    decl,
                })
                .collect::<Vec<_>>();
            let implemented_set = implemented(&root.join(lib.sim_dir))?;
            for name in &implemented_set {
                if !functions.iter().any(|f| &f.name == name) {
                    return Err(format!(
                        "{} implements {name}, which is not in {}",
                        lib.sim_dir, lib.bindings
                    ));
                }
            }
            libs.push(functions);
            implemented_sets.push(implemented_set);
        }
        let dcmi = api_functions(&read(&root.join(DCMI_BINDINGS))?)
            .map_err(|e| format!("{DCMI_BINDINGS}: {e}"))?
            .into_iter()
            .map(|f| f.sig.ident.to_string())
            .collect();
        let dcmi_implemented = implemented(&root.join("cann-sim/src/dcmi"))?.len();
        let plan = Plan {
            libs,
            implemented: implemented_sets,
            aliases,
            dcmi,
            dcmi_implemented,
            checks: abi_checks::all()?,
        };
        plan.validate_checks()?;
        Ok(plan)
    }

    fn is_implemented(&self, name: &str) -> bool {
        self.implemented.iter().any(|s| s.contains(name))
    }

    fn function(&self, name: &str) -> Option<&Function> {
        self.libs.iter().flatten().find(|f| f.name == name)
    }

    /// Every implemented function has exactly one check, and every check
    /// names a function of the bindings.
    fn validate_checks(&self) -> Result<(), String> {
        let mut seen = BTreeMap::new();
        for check in &self.checks {
            let name = check.function;
            let at = format!("{}:{}", check.file, check.line - 1);
            if self.function(name).is_none() {
                return Err(format!(
                    "{at} is a check of {name}, which is not in the bindings"
                ));
            }
            if let Some(first) = seen.insert(name, at.clone()) {
                return Err(format!("two checks of {name}: {first} and {at}"));
            }
        }
        let missing: Vec<&str> = self
            .implemented
            .iter()
            .flatten()
            .map(String::as_str)
            .filter(|name| !seen.contains_key(name))
            .collect();
        match missing.as_slice() {
            [] => Ok(()),
            [one] => Err(format!(
                "cann-sim implements {one} but abi-check has no check for it: add one to \
                 xtask/abi/checks/ (see xtask/abi/README.md)"
            )),
            many => Err(format!(
                "cann-sim implements {} but abi-check has no check for them: add them to \
                 xtask/abi/checks/ (see xtask/abi/README.md)",
                many.join(", ")
            )),
        }
    }

    /// The first function of `lib` that cann-sim does not implement, that
    /// answers a status code and takes only integers and pointers.
    fn not_supported_probe(&self, lib: usize) -> Option<&Function> {
        self.libs[lib].iter().find(|f| self.probeable(lib, f))
    }

    /// The functions of `lib`'s `named_probes`; an error names one that
    /// cannot be probed (not in the bindings, implemented, or not answering a
    /// status code from integers and pointers).
    fn named_probes(&self, lib: usize) -> Result<Vec<&Function>, String> {
        LIBS[lib]
            .named_probes
            .iter()
            .map(|name| {
                self.libs[lib]
                    .iter()
                    .find(|f| f.name == *name && self.probeable(lib, f))
                    .ok_or_else(|| {
                        format!(
                            "{name}, a named not-supported probe of {} (xtask/src/abi.rs), is not \
                             an unimplemented function answering {} from integers and pointers: \
                             remove it from `named_probes`",
                            LIBS[lib].label, LIBS[lib].status_type
                        )
                    })
            })
            .collect()
    }

    /// Can `f` of `lib` be called with zeros to see "not supported"?
    fn probeable(&self, lib: usize, f: &Function) -> bool {
        f.decl.sig.variadic.is_none()
            && !self.implemented[lib].contains(&f.name)
            && !self.checks.iter().any(|c| c.function == f.name)
            && returns(&f.decl.sig.output, LIBS[lib].status_type)
            && params(&f.decl)
                .iter()
                .all(|t| is_integer_or_pointer(t, &self.aliases, 0))
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn collect_aliases(text: &str, out: &mut BTreeMap<String, syn::Type>) -> Result<(), String> {
    let file = syn::parse_file(text).map_err(|e| format!("cannot parse: {e}"))?;
    for item in file.items {
        if let syn::Item::Type(t) = item {
            out.insert(t.ident.to_string(), *t.ty);
        }
    }
    Ok(())
}

pub(crate) fn params(f: &syn::ForeignItemFn) -> Vec<&syn::Type> {
    f.sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(p) => Some(&*p.ty),
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

fn returns(output: &syn::ReturnType, type_name: &str) -> bool {
    match output {
        syn::ReturnType::Type(_, ty) => {
            matches!(&**ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == type_name))
        }
        syn::ReturnType::Default => false,
    }
}

const INTEGERS: &[&str] = &[
    "c_char",
    "c_schar",
    "c_uchar",
    "c_short",
    "c_ushort",
    "c_int",
    "c_uint",
    "c_long",
    "c_ulong",
    "c_longlong",
    "c_ulonglong",
    "i8",
    "u8",
    "i16",
    "u16",
    "i32",
    "u32",
    "i64",
    "u64",
    "isize",
    "usize",
    "bool",
];

/// Whether `ty` (through the bindings' aliases) is an integer, enum or pointer.
fn is_integer_or_pointer(
    ty: &syn::Type,
    aliases: &BTreeMap<String, syn::Type>,
    depth: u32,
) -> bool {
    match ty {
        syn::Type::Ptr(_) | syn::Type::BareFn(_) => true,
        syn::Type::Paren(p) => is_integer_or_pointer(&p.elem, aliases, depth),
        syn::Type::Group(g) => is_integer_or_pointer(&g.elem, aliases, depth),
        syn::Type::Path(p) => {
            let Some(seg) = p.path.segments.last() else {
                return false;
            };
            let name = seg.ident.to_string();
            if name == "Option" || INTEGERS.contains(&name.as_str()) {
                return true;
            }
            depth < 16
                && aliases
                    .get(&name)
                    .is_some_and(|t| is_integer_or_pointer(t, aliases, depth + 1))
        }
        _ => false,
    }
}

/// The C++ spelling of a bindings type. Typedef, struct and enum names are
/// the headers' own (bindgen keeps them), so the spelling is exact.
fn cxx_type(ty: &syn::Type) -> Result<String, String> {
    match ty {
        syn::Type::Ptr(p) => {
            let inner = cxx_type(&p.elem)?;
            Ok(if p.const_token.is_some() {
                format!("{inner} const *")
            } else {
                format!("{inner} *")
            })
        }
        syn::Type::Paren(p) => cxx_type(&p.elem),
        syn::Type::Group(g) => cxx_type(&g.elem),
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok("void".into()),
        syn::Type::BareFn(f) => Ok(format!("{} *", cxx_bare_fn(f)?)),
        // Only behind a pointer: `int64_t (*)[2]` from `int64_t range[][2]`.
        syn::Type::Array(a) => match &a.len {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => Ok(format!(
                "abi_id<{}[{}]>",
                cxx_type(&a.elem)?,
                n.base10_digits()
            )),
            _ => Err("an array whose length is not a literal".into()),
        },
        syn::Type::Path(p) => {
            let seg = p
                .path
                .segments
                .last()
                .ok_or_else(|| "empty type path".to_string())?;
            let name = seg.ident.to_string();
            if name == "Option" {
                let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
                    return Err("Option without a type argument".into());
                };
                return match args.args.first() {
                    Some(syn::GenericArgument::Type(syn::Type::BareFn(f))) => {
                        Ok(format!("{} *", cxx_bare_fn(f)?))
                    }
                    _ => Err("Option of something other than a function pointer".into()),
                };
            }
            Ok(match name.as_str() {
                "c_void" => "void",
                "c_char" => "char",
                "c_schar" => "signed char",
                "c_uchar" => "unsigned char",
                "c_short" => "short",
                "c_ushort" => "unsigned short",
                "c_int" => "int",
                "c_uint" => "unsigned int",
                "c_long" => "long",
                "c_ulong" => "unsigned long",
                "c_longlong" => "long long",
                "c_ulonglong" => "unsigned long long",
                "c_float" | "f32" => "float",
                "c_double" | "f64" => "double",
                "i8" => "int8_t",
                "u8" => "uint8_t",
                "i16" => "int16_t",
                "u16" => "uint16_t",
                "i32" => "int32_t",
                "u32" => "uint32_t",
                "i64" => "int64_t",
                "u64" => "uint64_t",
                "isize" => "ptrdiff_t",
                "usize" => "size_t",
                "bool" => "bool",
                other => other,
            }
            .to_string())
        }
        other => Err(format!(
            "no C++ spelling for the type `{}`",
            quote::quote!(#other)
        )),
    }
}

fn cxx_ret(output: &syn::ReturnType) -> Result<String, String> {
    match output {
        syn::ReturnType::Default => Ok("void".into()),
        syn::ReturnType::Type(_, ty) => cxx_type(ty),
    }
}

/// `abi_id<R(A, B)>`: a function type.
pub(crate) fn cxx_fn_type<'a>(
    inputs: impl Iterator<Item = &'a syn::Type>,
    variadic: bool,
    output: &syn::ReturnType,
) -> Result<String, String> {
    let mut args = inputs.map(cxx_type).collect::<Result<Vec<_>, _>>()?;
    if variadic {
        args.push("...".into());
    }
    Ok(format!("abi_id<{}({})>", cxx_ret(output)?, args.join(", ")))
}

fn cxx_bare_fn(f: &syn::TypeBareFn) -> Result<String, String> {
    cxx_fn_type(
        f.inputs.iter().map(|a| &a.ty),
        f.variadic.is_some(),
        &f.output,
    )
}

/// A C++ string literal.
fn c_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The generated program.
struct Program {
    text: String,
    /// Source line → the function whose address that line takes.
    export_lines: BTreeMap<usize, String>,
}

/// Builds a program's source text while counting its lines. Pieces from the
/// files of `xtask/abi/` keep their own names and line numbers (`#line`), so
/// that compiler messages and failed expectations point into those files.
pub(crate) struct Source {
    text: String,
    lines: usize,
    /// Where the program is written (what the lines after a piece are named).
    path: String,
}

impl Source {
    pub(crate) fn new(path: &Path) -> Source {
        Source {
            text: String::new(),
            lines: 0,
            path: path.display().to_string(),
        }
    }

    /// Appends `s` and a line break.
    pub(crate) fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
        self.lines += s.matches('\n').count() + 1;
    }

    /// Appends `text`, which starts at line `line` of `file`.
    pub(crate) fn push_from(&mut self, file: &str, line: usize, text: &str) {
        self.push(&format!("#line {line} {}", c_str(file)));
        self.push(text.trim_end());
        // The line after this directive is the next line of the program.
        let next = self.lines + 2;
        self.push(&format!("#line {next} {}", c_str(&self.path)));
    }

    /// Appends a whole file of `xtask/abi/`: (path, text).
    pub(crate) fn push_file(&mut self, (file, text): (&str, &str)) {
        self.push_from(file, 1, text);
    }

    /// The number of the next line.
    pub(crate) fn next_line(&self) -> usize {
        self.lines + 1
    }

    pub(crate) fn into_text(self) -> String {
        self.text
    }
}

fn generate(plan: &Plan, path: &Path) -> Result<Program, String> {
    let mut src = Source::new(path);
    src.push("// @generated by `cargo xtask abi-check` (xtask/src/abi.rs). Do not edit.");
    src.push_file(COMMON);
    src.push_file(PREAMBLE);
    src.push("");
    src.push("// ---- generated -------------------------------------------------------------");
    src.push(&format!("#define ABI_DEVICES {DEVICES}"));
    src.push(&format!("#define ABI_HBM_BYTES ((size_t){HBM_MIB} << 20)"));
    src.push(&format!("#define ABI_SOC_NAME {}", c_str(SOC_NAME)));
    src.push("");

    // Exports: the address of every function, through its declared type.
    let mut export_lines = BTreeMap::new();
    let mut skipped = Vec::new();
    src.push("static void abi_collect_exports(std::vector<AbiExport> &v) {");
    for (i, functions) in plan.libs.iter().enumerate() {
        for f in functions {
            if let Some((_, why)) = INLINE.iter().find(|(n, _)| *n == f.name) {
                skipped.push(format!("{}: {why}", f.name));
                continue;
            }
            if f.decl.sig.variadic.is_some() {
                skipped.push(format!(
                    "{}: C-variadic; stable Rust cannot define it, so cann-sim does not export it",
                    f.name
                ));
                continue;
            }
            let ty = cxx_fn_type(params(&f.decl).into_iter(), false, &f.decl.sig.output)
                .map_err(|e| format!("{} ({}): {e}", f.name, LIBS[i].bindings))?;
            export_lines.insert(src.next_line(), f.name.clone());
            src.push(&format!(
                "    {{ {ty} *p = &{name}; v.push_back({{\"{name}\", abi_addr(p)}}); }}",
                name = f.name
            ));
        }
    }
    src.push("}");
    src.push("");
    for (name, why) in INLINE {
        if plan.function(name).is_none() {
            skipped.push(format!("{name}: {why}"));
        }
    }
    skipped.push(
        "aclnn (acl_sys::aclnn): no aclnn header is available outside the CANN toolkit, so there is \
         nothing to compile its exports against; cann_sim::aclnn_api() checks them against the \
         hand-written bindings at compile time"
            .to_string(),
    );

    // DCMI: names only.
    src.push("static const char *const abi_dcmi[] = {");
    for name in &plan.dcmi {
        src.push(&format!("    {},", c_str(name)));
    }
    src.push("    nullptr,");
    src.push("};");
    src.push("");

    // Behavioural checks of the implemented functions.
    let mut groups = Vec::new();
    let mut not_run = Vec::new();
    for (i, check) in plan.checks.iter().enumerate() {
        if !plan.is_implemented(check.function) {
            not_run.push(check.function);
            continue;
        }
        src.push(&format!("// {}", check.function));
        src.push(&format!("static void abi_check_{i}() {{"));
        src.push_from(check.file, check.line, check.body);
        src.push("}");
        src.push("");
        groups.push((check.function.to_string(), format!("abi_check_{i}")));
    }
    let checked = groups.len();

    // One function of each library that cann-sim does not implement.
    let mut probe_notes = Vec::new();
    for (i, lib) in LIBS.iter().enumerate() {
        let first = plan.not_supported_probe(i);
        if first.is_none() {
            probe_notes.push(format!(
                "not supported ({}): no unimplemented function answering {} to call",
                lib.label, lib.status_type
            ));
        }
        let probes = first.into_iter().chain(plan.named_probes(i)?);
        for (n, f) in probes.enumerate() {
            let fname = format!("abi_probe_{}_{n}", lib.label.to_lowercase());
            src.push(&format!(
                "static void {fname}() {{ ABI_NOT_SUPPORTED({}, {}); }}",
                f.name, lib.not_supported
            ));
            src.push("");
            let args = vec!["0"; params(&f.decl).len()].join(", ");
            groups.push((
                format!(
                    "not supported ({}): {}({args}) returns {} and aclGetRecentErrMsg names it",
                    lib.label, f.name, lib.not_supported
                ),
                fname,
            ));
        }
    }

    let exported: usize = plan
        .libs
        .iter()
        .flatten()
        .filter(|f| f.decl.sig.variadic.is_none() && !INLINE.iter().any(|(n, _)| *n == f.name))
        .count();
    src.push("int main() {");
    src.push("    setvbuf(stdout, nullptr, _IOLBF, 0);");
    src.push("    int failed = 0;");
    src.push("    std::vector<AbiExport> exports;");
    src.push("    abi_collect_exports(exports);");
    src.push("    failed += abi_report_exports(exports);");
    for note in &skipped {
        src.push(&format!("    printf(\"  skip  %s\\n\", {});", c_str(note)));
    }
    src.push(&format!(
        "    failed += abi_report_dcmi(abi_dcmi, {});",
        plan.dcmi_implemented
    ));
    for name in &not_run {
        src.push(&format!(
            "    printf(\"  skip  %s: not implemented by cann-sim yet (its check is ready)\\n\", {});",
            c_str(name)
        ));
    }
    for (label, fname) in &groups {
        src.push(&format!(
            "    failed += abi_run_group({}, {fname});",
            c_str(label)
        ));
    }
    for note in &probe_notes {
        src.push(&format!("    printf(\"  skip  %s\\n\", {});", c_str(note)));
    }
    src.push("    abi_print_config(\"@config-zero\", 0x00);");
    src.push("    abi_print_config(\"@config-ab\", 0xAB);");
    src.push(&format!("    printf(\"@checked {checked}\\n\");"));
    src.push("    printf(\"@failed %d\\n\", failed);");
    src.push("    return failed == 0 ? 0 : 1;");
    src.push("}");

    if exported != export_lines.len() {
        return Err(format!(
            "internal error: {exported} exports counted, {} generated",
            export_lines.len()
        ));
    }
    Ok(Program {
        text: src.into_text(),
        export_lines,
    })
}

/// Builds the cann-sim cdylib with the profile xtask was built with (and the
/// caller's target directory); returns the path of `libcann_sim.so`.
pub(crate) fn build_sim() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "cann-sim-cdylib",
        "--lib",
        "--message-format=json-render-diagnostics",
    ]);
    match profile() {
        Some(p) if p == "release" => {
            cmd.arg("--release");
        }
        Some(p) => {
            cmd.args(["--profile", &p]);
        }
        None => {}
    }
    cmd.current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !out.status.success() {
        return Err(format!(
            "`cargo build -p cann-sim-cdylib` failed ({})",
            describe_status(&out.status)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter(|l| {
            l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"cann_sim\"")
        })
        .flat_map(json_filenames)
        .find(|f| f.ends_with("/libcann_sim.so"))
        .map(PathBuf::from)
        .ok_or_else(|| "`cargo build -p cann-sim-cdylib` produced no libcann_sim.so".to_string())
}

/// The cargo profile this xtask binary was built with: the name of the
/// directory it lies in (`debug` is the `dev` profile).
fn profile() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let mut dir = exe.parent()?;
    if dir.file_name()? == "deps" {
        dir = dir.parent()?;
    }
    match dir.file_name()?.to_str()? {
        "debug" => None,
        other => Some(other.to_string()),
    }
}

/// The strings of the `"filenames"` array of one line of cargo's JSON output.
fn json_filenames(line: &str) -> Vec<String> {
    let Some(start) = line.find("\"filenames\":[") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut chars = line[start + "\"filenames\":[".len()..].chars();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, ']') => break,
            (None, '"') => current = Some(String::new()),
            (None, _) => {}
            (Some(s), '\\') => match chars.next() {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some(other) => s.push(other),
                None => break,
            },
            (Some(_), '"') => out.extend(current.take()),
            (Some(s), c) => s.push(c),
        }
    }
    out
}

pub(crate) fn compile(
    dirs: &HeaderDirs,
    source: &Path,
    exe: &Path,
    lib_dir: &Path,
    export_lines: &BTreeMap<usize, String>,
) -> Result<(), String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(["-std=c++14", "-O0", "-fPIE", "-pie", "-pthread", "-w"]);
    let mut includes = vec![
        dirs.acl_inc.clone(),
        dirs.acl_inc.join("acl"),
        dirs.hccl_inc.clone(),
    ];
    includes.extend(dirs.extra.iter().cloned());
    for dir in includes {
        cmd.arg(format!("-I{}", dir.display()));
    }
    cmd.arg(source)
        .arg("-o")
        .arg(exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lcann_sim")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .args(["-Wl,-z,now", "-ldl"]);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run the C++ compiler `{cxx}` (set CXX): {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(explain_compile_failure(&stderr, source, export_lines))
}

/// Turns the compiler's and linker's complaints into a statement of which
/// functions are wrong.
fn explain_compile_failure(
    stderr: &str,
    source: &Path,
    export_lines: &BTreeMap<usize, String>,
) -> String {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut mismatched = BTreeMap::new();
    let mut undefined = BTreeSet::new();
    for line in stderr.lines() {
        if let Some(rest) = line
            .find(&format!("{file}:"))
            .map(|i| &line[i + file.len() + 1..])
            && let Some((num, msg)) = rest.split_once(':')
            && let Ok(num) = num.parse::<usize>()
            && msg.contains("error")
            && let Some(name) = export_lines.get(&num)
        {
            // Drop the column number.
            let msg = msg.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
            mismatched
                .entry(name.clone())
                .or_insert_with(|| msg.trim().to_string());
        }
        if let Some(i) = line.find("undefined reference to `") {
            let rest = &line[i + "undefined reference to `".len()..];
            if let Some(end) = rest.find('\'') {
                undefined.insert(rest[..end].to_string());
            }
        }
    }
    let mut msg = String::new();
    if !mismatched.is_empty() {
        let _ = writeln!(
            msg,
            "{} function(s) are declared differently in the bindings and in the real headers \
             (regenerate with `cargo xtask bindgen`):",
            mismatched.len()
        );
        for (name, why) in &mismatched {
            let _ = writeln!(msg, "    {name}: {why}");
        }
    }
    if !undefined.is_empty() {
        let _ = writeln!(
            msg,
            "libcann_sim.so does not export {} function(s) the headers declare: {}",
            undefined.len(),
            undefined.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if msg.is_empty() {
        let excerpt: Vec<&str> = stderr.lines().take(60).collect();
        let _ = write!(
            msg,
            "compiling {} failed:\n{}",
            source.display(),
            excerpt.join("\n")
        );
    } else {
        let _ = write!(msg, "(program: {})", source.display());
    }
    msg
}

pub(crate) struct Output {
    pub(crate) status: std::process::ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs the program on a fixed simulated machine, with a time limit.
/// Compiles `xtask/abi/kernel.cpp` into a cann-sim kernel binary (a host
/// shared library) for the kernel checks; the program finds it through
/// `ABI_KERNEL_SO`.
fn compile_kernel(out_dir: &Path) -> Result<PathBuf, String> {
    let source = workspace_root().join("xtask/abi/kernel.cpp");
    let lib = out_dir.join("libabi_kernel.so");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let out = Command::new(&cxx)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot run the C++ compiler `{cxx}` (set CXX): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "compiling {} failed:\n{}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(lib)
}

pub(crate) fn execute(exe: &Path, kernel: &Path) -> Result<Output, String> {
    let mut cmd = Command::new(exe);
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CANN_SIM_") || k == "ASCEND_RT_VISIBLE_DEVICES" {
            cmd.env_remove(&key);
        }
    }
    cmd.env("CANN_SIM_DEVICES", DEVICES.to_string())
        .env("CANN_SIM_HBM_MIB", HBM_MIB.to_string())
        .env("CANN_SIM_SOC_NAME", SOC_NAME)
        .env("ABI_KERNEL_SO", kernel)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                let partial = out.join().unwrap_or_default();
                return Err(format!(
                    "{} did not finish within {} s (a hang in cann-sim?); its output so far:\n{}",
                    exe.display(),
                    TIMEOUT.as_secs(),
                    partial.trim_end()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("waiting for {}: {e}", exe.display())),
        }
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

pub(crate) fn describe_status(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

pub(crate) fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd-length hex from the program".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad hex from the program at {i}"))
        })
        .collect()
}

/// `HcclCommConfigInit` from `fill` bytes, in Rust: `hccl_sys::comm_config_init`
/// on storage holding `fill` everywhere (padding included), read back as bytes.
pub(crate) fn rust_config_bytes(
    fill: u8,
    acl_version: Option<(u32, u32, u32)>,
) -> (Vec<u8>, HcclCommConfig) {
    let size = std::mem::size_of::<HcclCommConfig>();
    let mut storage = std::mem::MaybeUninit::<HcclCommConfig>::uninit();
    // SAFETY: `storage` is valid for writing one HcclCommConfig; afterwards
    // every byte is initialised, and any byte pattern is a valid
    // HcclCommConfig (a plain C struct of integers and char arrays).
    let config = unsafe {
        std::ptr::write_bytes(storage.as_mut_ptr(), fill, 1);
        storage.assume_init_mut()
    };
    hccl_sys::comm_config_init_for(config, acl_version);
    let copy = *config;
    // SAFETY: `config` is `size` initialised bytes (write_bytes initialised
    // the padding; the field stores of comm_config_init write only fields).
    let bytes =
        unsafe { std::slice::from_raw_parts((config as *const HcclCommConfig).cast::<u8>(), size) }
            .to_vec();
    (bytes, copy)
}

/// The field of `HcclCommConfig` at `offset`, for messages.
pub(crate) fn config_field(offset: usize) -> &'static str {
    use std::mem::offset_of;
    let fields = [
        (
            "reserved (size, magic word, version)",
            offset_of!(HcclCommConfig, reserved),
        ),
        ("hcclBufferSize", offset_of!(HcclCommConfig, hcclBufferSize)),
        (
            "hcclDeterministic",
            offset_of!(HcclCommConfig, hcclDeterministic),
        ),
        ("hcclCommName", offset_of!(HcclCommConfig, hcclCommName)),
        ("hcclUdi", offset_of!(HcclCommConfig, hcclUdi)),
        (
            "hcclOpExpansionMode",
            offset_of!(HcclCommConfig, hcclOpExpansionMode),
        ),
        (
            "hcclRdmaTrafficClass",
            offset_of!(HcclCommConfig, hcclRdmaTrafficClass),
        ),
        (
            "hcclRdmaServiceLevel",
            offset_of!(HcclCommConfig, hcclRdmaServiceLevel),
        ),
        (
            "hcclWorldRankID",
            offset_of!(HcclCommConfig, hcclWorldRankID),
        ),
        ("hcclJobID", offset_of!(HcclCommConfig, hcclJobID)),
        (
            "aclGraphZeroCopyEnable",
            offset_of!(HcclCommConfig, aclGraphZeroCopyEnable),
        ),
        (
            "padding after aclGraphZeroCopyEnable",
            offset_of!(HcclCommConfig, hcclExecTimeOut) - 3,
        ),
        (
            "hcclExecTimeOut",
            offset_of!(HcclCommConfig, hcclExecTimeOut),
        ),
        ("hcclAlgo", offset_of!(HcclCommConfig, hcclAlgo)),
        (
            "hcclRetryEnable",
            offset_of!(HcclCommConfig, hcclRetryEnable),
        ),
        (
            "hcclRetryParams",
            offset_of!(HcclCommConfig, hcclRetryParams),
        ),
        ("hcclBufferName", offset_of!(HcclCommConfig, hcclBufferName)),
        (
            "padding after hcclBufferName",
            offset_of!(HcclCommConfig, hcclQos) - 2,
        ),
        ("hcclQos", offset_of!(HcclCommConfig, hcclQos)),
        (
            "hcclSymWinMaxMemSizePerRank",
            offset_of!(HcclCommConfig, hcclSymWinMaxMemSizePerRank),
        ),
    ];
    fields
        .iter()
        .rev()
        .find(|(_, start)| *start <= offset)
        .map_or("?", |(name, _)| name)
}

type ConfigLines = BTreeMap<String, (Option<usize>, Option<Vec<u8>>)>;

/// Compares the program's `HcclCommConfigInit` bytes with hccl-sys's.
fn compare_configs(configs: &ConfigLines) -> Result<String, String> {
    let size = std::mem::size_of::<HcclCommConfig>();
    for (tag, fill) in [("@config-zero", 0u8), ("@config-ab", 0xAB)] {
        let start = if fill == 0 {
            "zero-filled".to_string()
        } else {
            format!("0x{fill:02X}-filled")
        };
        let Some((Some(c_size), Some(c_bytes))) = configs.get(tag) else {
            return Err(format!("the program printed no {tag} line"));
        };
        if *c_size != size || c_bytes.len() != size {
            return Err(format!(
                "sizeof(HcclCommConfig) is {c_size} in C++ but {size} in hccl-sys"
            ));
        }
        let (rust, value) = rust_config_bytes(fill, None);
        if let Some(i) = (0..size).find(|&i| c_bytes[i] != rust[i]) {
            return Err(format!(
                "from a {start} struct, byte {i} ({}) is {:#04x} after the header's \
                 HcclCommConfigInit but {:#04x} after hccl_sys::comm_config_init",
                config_field(i),
                c_bytes[i],
                rust[i]
            ));
        }
        if fill == 0 {
            // The same values as comm_config_default() (compared field by
            // field: padding is not part of a Rust value).
            let default = hccl_sys::comm_config_default();
            if format!("{default:?}") != format!("{value:?}") {
                return Err(
                    "hccl_sys::comm_config_default() differs from comm_config_init on a \
                     zero-filled struct (and so from the header's HcclCommConfigInit)"
                        .into(),
                );
            }
        }
    }
    Ok(format!(
        "HcclCommConfigInit: {size} bytes from zero-filled and 0xAB-filled structs identical to \
         hccl_sys::comm_config_init (values equal comm_config_default())"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_keep_their_lines_and_the_program_its_own() {
        let mut src = Source::new(Path::new("/out/abi_check.cpp"));
        src.push("// banner");
        src.push_file(("xtask/abi/a.cpp", "int a;\nint b;\n\n"));
        let export = src.next_line();
        src.push("int c;");
        src.push_from("xtask/abi/checks/x.cpp", 7, "    f();");
        src.push("}");
        let text = src.into_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "#line 1 \"xtask/abi/a.cpp\"");
        assert_eq!(lines[2], "int a;");
        assert_eq!(lines[export - 1], "int c;");
        // Every directive naming the program gives the next line its own number.
        for (i, line) in lines.iter().enumerate() {
            if let Some(n) = line.strip_prefix("#line ")
                && let Some(n) = n.strip_suffix(" \"/out/abi_check.cpp\"")
            {
                assert_eq!(n.parse::<usize>().unwrap(), i + 2, "{line}");
            }
        }
        assert_eq!(lines[export + 1], "    f();");
        assert_eq!(lines.last(), Some(&"}"));
    }
}

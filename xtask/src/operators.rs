//! The aclnn operator table (`acl-sys/operators.toml`) and what
//! `cargo xtask generate` makes of it: the operator declarations of
//! `acl-sys` (fed to the same code generator as the hand-written core
//! declarations, which makes the loader entries), the two-phase wrappers of
//! `acl::aclnn`, cann-sim's exports of the operators it plans, and the rows
//! of `docs/COVERAGE.md`.

use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

/// The table's path under the workspace root.
pub const TABLE: &str = "acl-sys/operators.toml";

#[derive(Deserialize)]
struct File {
    op: Vec<RawOp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    name: String,
    rust: Option<String>,
    doc: String,
    page: String,
    args: Vec<String>,
    dtypes: Option<String>,
    dtypes_a2: Option<String>,
    dtypes_a3: Option<String>,
    format: Option<String>,
    errors: Option<String>,
    sim: Option<String>,
}

/// One operator of the table.
pub struct Op {
    /// `Add` for `aclnnAddGetWorkspaceSize` / `aclnnAdd`.
    pub name: String,
    /// The `acl::aclnn` function.
    pub rust: String,
    pub doc: String,
    pub page: String,
    pub args: Vec<Arg>,
    /// The page's dtype lists: the union over the products it covers.
    pub dtypes: Option<String>,
    /// The lists of the Atlas A2 parts (Ascend910B*) where the page narrows
    /// the union: only the arguments named; the others take the union's.
    pub dtypes_a2: Option<String>,
    /// The lists of the Atlas A3 parts (Ascend910_93*) where they differ
    /// from the A2 ones: only the arguments named, the others take the
    /// union's (absent: A3 takes A2's lists).
    pub dtypes_a3: Option<String>,
    pub format: Option<String>,
    pub errors: Option<String>,
    /// cann-sim's planning expression, when it has a kernel.
    pub sim: Option<String>,
}

/// The C type of an argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Tensor,
    Scalar,
    IntArray,
    FloatArray,
    BoolArray,
    TensorList,
    I64,
    I32,
    I8,
    U64,
    F64,
    F32,
    Bool,
    DataType,
    Str,
}

/// What the operator does with an argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    In,
    Out,
    InOut,
    Opt,
    OptOut,
}

/// One parameter of `aclnnXxxGetWorkspaceSize`.
#[derive(Debug)]
pub struct Arg {
    /// The documented (C) name.
    pub c_name: String,
    pub kind: Kind,
    /// Declared `const` (for pointers: `const T*`).
    pub konst: bool,
    pub role: Role,
    /// The `acl` enumeration an integer argument takes (`{RotaryMode}`).
    pub rust_type: Option<String>,
}

impl Arg {
    fn is_pointer(&self) -> bool {
        matches!(
            self.kind,
            Kind::Tensor
                | Kind::Scalar
                | Kind::IntArray
                | Kind::FloatArray
                | Kind::BoolArray
                | Kind::TensorList
                | Kind::Str
        )
    }

    /// The parameter's name in Rust declarations that keep C's spelling
    /// (`self` is a keyword).
    fn sys_name(&self) -> String {
        keyword_safe(&self.c_name)
    }

    /// The `acl::aclnn` parameter: snake case.
    fn rust_name(&self) -> String {
        keyword_safe(&snake(&self.c_name))
    }

    fn sys_type(&self) -> String {
        let ptr = |t: &str| {
            if self.konst {
                format!("*const {t}")
            } else {
                format!("*mut {t}")
            }
        };
        match self.kind {
            Kind::Tensor => ptr("aclTensor"),
            Kind::Scalar => ptr("aclScalar"),
            Kind::IntArray => ptr("aclIntArray"),
            Kind::FloatArray => ptr("aclFloatArray"),
            Kind::BoolArray => ptr("aclBoolArray"),
            Kind::TensorList => ptr("aclTensorList"),
            Kind::Str => ptr("::core::ffi::c_char"),
            Kind::I64 => "i64".into(),
            Kind::I32 => "i32".into(),
            Kind::I8 => "i8".into(),
            Kind::U64 => "u64".into(),
            Kind::F64 => "f64".into(),
            Kind::F32 => "f32".into(),
            Kind::Bool => "bool".into(),
            Kind::DataType => "crate::aclDataType".into(),
        }
    }
}

fn keyword_safe(name: &str) -> String {
    match name {
        "self" | "type" | "in" | "ref" | "mod" | "fn" | "use" | "impl" | "box" | "move"
        | "loop" | "match" | "where" | "dyn" | "async" | "await" | "crate" | "super" => {
            format!("{name}_")
        }
        _ => name.to_string(),
    }
}

/// `gradOutput` → `grad_output`, `NLLLoss` → `nll_loss`, `Log1p` → `log1p`,
/// `AdamWV2` → `adam_wv2`.
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                None => false,
                Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_ascii_uppercase() => next.is_some_and(|n| n.is_ascii_lowercase()),
                _ => false,
            };
            if boundary && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The `acl::aclnn` function of an operator by the naming rule.
fn rust_name(name: &str) -> String {
    match name.strip_prefix("Inplace") {
        Some(rest) if !rest.is_empty() => format!("{}_", snake(rest)),
        _ => snake(name),
    }
}

fn parse_arg(op: &str, text: &str) -> Result<Arg, String> {
    let err = |why: &str| format!("{TABLE}: {op}: argument `{text}`: {why}");
    let (name, rest) = text.split_once(':').ok_or_else(|| err("no `name: type`"))?;
    let (rest, rust_type) = match rest.split_once('{') {
        Some((before, ty)) => {
            let (ty, after) = ty.split_once('}').ok_or_else(|| err("no closing `}`"))?;
            (format!("{before} {after}"), Some(ty.trim().to_string()))
        }
        None => (rest.to_string(), None),
    };
    let rest = rest.as_str();
    let (ty, role) = match rest.split_once('[') {
        Some((ty, role)) => (
            ty.trim(),
            match role.trim().trim_end_matches(']').trim() {
                "out" => Role::Out,
                "inout" => Role::InOut,
                "opt" => Role::Opt,
                "optout" => Role::OptOut,
                other => return Err(err(&format!("unknown role `{other}`"))),
            },
        ),
        None => (rest.trim(), Role::In),
    };
    let (konst, base) = match ty.strip_prefix("const ") {
        Some(b) => (true, b.trim()),
        None => (false, ty),
    };
    let kind = match base {
        "aclTensor*" => Kind::Tensor,
        "aclScalar*" => Kind::Scalar,
        "aclIntArray*" => Kind::IntArray,
        "aclFloatArray*" => Kind::FloatArray,
        "aclBoolArray*" => Kind::BoolArray,
        "aclTensorList*" => Kind::TensorList,
        "char*" => Kind::Str,
        "int64_t" => Kind::I64,
        "int32_t" | "int" => Kind::I32,
        "int8_t" => Kind::I8,
        "uint64_t" => Kind::U64,
        "double" => Kind::F64,
        "float" => Kind::F32,
        "bool" => Kind::Bool,
        "aclDataType" => Kind::DataType,
        other => return Err(err(&format!("unknown C type `{other}`"))),
    };
    let arg = Arg {
        c_name: name.trim().to_string(),
        kind,
        konst,
        role,
        rust_type,
    };
    if arg.rust_type.is_some() && arg.is_pointer() {
        return Err(err("only integers take an enumeration type"));
    }
    if matches!(role, Role::Out | Role::InOut | Role::OptOut) && kind != Kind::Tensor {
        return Err(err(
            "only tensors are written (written tensor lists are not supported yet)",
        ));
    }
    if role == Role::Opt && !arg.is_pointer() {
        return Err(err("only pointers may be null"));
    }
    Ok(arg)
}

/// Reads and checks the table.
pub fn load(root: &Path) -> Result<Vec<Op>, String> {
    let path = root.join(TABLE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: File = toml::from_str(&text).map_err(|e| format!("{TABLE}: {e}"))?;
    let mut ops = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for raw in file.op {
        if !seen.insert(raw.name.clone()) {
            return Err(format!("{TABLE}: {} is described twice", raw.name));
        }
        let args = raw
            .args
            .iter()
            .map(|a| parse_arg(&raw.name, a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut names = std::collections::BTreeSet::new();
        for a in &args {
            if !names.insert(a.c_name.clone()) {
                return Err(format!(
                    "{TABLE}: {}: two arguments named {}",
                    raw.name, a.c_name
                ));
            }
        }
        check_product_lists(&raw, &args)?;
        ops.push(Op {
            rust: raw.rust.unwrap_or_else(|| rust_name(&raw.name)),
            name: raw.name,
            doc: raw.doc,
            page: raw.page,
            args,
            dtypes: raw.dtypes,
            dtypes_a2: raw.dtypes_a2,
            dtypes_a3: raw.dtypes_a3,
            format: raw.format,
            errors: raw.errors,
            sim: raw.sim,
        });
    }
    let mut rust = std::collections::BTreeSet::new();
    for op in &ops {
        if !rust.insert(op.rust.clone()) {
            return Err(format!(
                "{TABLE}: two operators are named `acl::aclnn::{}`; give one a `rust` name",
                op.rust
            ));
        }
    }
    Ok(ops)
}

/// `self {f16,f32}; dim {i64}; out {=self}` as `(argument, [types])`
/// pairs, in order. Parts that are not `name {list}` are skipped.
fn dtype_lists(text: &str) -> Vec<(&str, Vec<&str>)> {
    text.split(';')
        .filter_map(|part| {
            let (name, rest) = part.trim().split_once('{')?;
            let list = rest.trim().strip_suffix('}')?;
            Some((name.trim(), list.split(',').map(str::trim).collect()))
        })
        .collect()
}

/// Checks `dtypes_a2`/`dtypes_a3` against the union: each names an
/// argument of the union with a list of types, once, and lists only types
/// of the union (a product cannot take what the page's union omits:
/// write a type a product adds into `dtypes` too). The union itself holds
/// no per-product notes (`|`): those are the per-product fields.
fn check_product_lists(raw: &RawOp, args: &[Arg]) -> Result<(), String> {
    let op = &raw.name;
    let union = raw.dtypes.as_deref().unwrap_or_default();
    if union.contains('|') {
        return Err(format!(
            "{TABLE}: {op}: `dtypes` is the union of the page's lists only; \
             per-product lists go into `dtypes_a2`/`dtypes_a3`"
        ));
    }
    let union = dtype_lists(union);
    for (field, text) in [("dtypes_a2", &raw.dtypes_a2), ("dtypes_a3", &raw.dtypes_a3)] {
        let Some(text) = text else { continue };
        let err = |why: String| format!("{TABLE}: {op}: `{field}`: {why}");
        let lists = dtype_lists(text);
        let parts = text.split(';').filter(|p| !p.trim().is_empty()).count();
        if lists.is_empty() || parts != lists.len() {
            return Err(err(format!("`{text}` is not `argument {{types}}; ...`")));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (name, types) in &lists {
            if !seen.insert(*name) {
                return Err(err(format!("{name} is listed twice")));
            }
            if !args.iter().any(|a| a.c_name == *name) {
                return Err(err(format!("{name} is not an argument")));
            }
            let Some((_, all)) = union.iter().find(|(n, _)| n == name) else {
                return Err(err(format!("{name} has no list in `dtypes`")));
            };
            for t in types {
                if acl_dtype(t).is_none() {
                    return Err(err(format!("{name}: `{t}` is not a data type")));
                }
                if !all.contains(t) {
                    return Err(err(format!(
                        "{name}: {t} is not in the union `{{{}}}`",
                        all.join(",")
                    )));
                }
            }
        }
    }
    Ok(())
}

fn doc_line(text: &str) -> String {
    text.replace('\n', " ")
}

/// A fact of the table (dtypes, formats, codes) as Markdown text: brackets
/// and angle brackets escaped, so that rustdoc reads no links or tags.
fn doc_fact(text: &str) -> String {
    let mut out = String::new();
    for c in doc_line(text).chars() {
        if matches!(c, '[' | ']' | '<' | '>' | '*' | '_' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A one-line summary of an operator for docs: its `doc`, or a sentence
/// naming the C function.
fn summary(op: &Op) -> String {
    if op.doc.is_empty() {
        format!("The `aclnn{}` operator.", op.name)
    } else {
        doc_line(&op.doc)
    }
}

/// The operator declarations in the form of `acl-sys/aclnn_declarations.rs`
/// (an `extern` block), appended to the core declarations before the code
/// generator makes the bindings and loader entries.
pub fn declarations(ops: &[Op]) -> String {
    let mut s = String::from(
        "\n// Operators: generated from `acl-sys/operators.toml` by `cargo xtask generate`.\n\
         unsafe extern \"C\" {\n",
    );
    for op in ops {
        let params: Vec<String> = op
            .args
            .iter()
            .map(|a| format!("{}: {}", a.sys_name(), a.sys_type()))
            .collect();
        let _ = writeln!(
            s,
            "    /// {} Plans the call: {}.\n    pub fn aclnn{}GetWorkspaceSize({}{}workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;",
            summary(op),
            op.page,
            op.name,
            params.join(", "),
            if params.is_empty() { "" } else { ", " },
        );
        let _ = writeln!(
            s,
            "    /// Runs the plan of `aclnn{0}GetWorkspaceSize` on `stream`.\n    pub fn aclnn{0}(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;",
            op.name
        );
    }
    s.push_str("}\n");
    s
}

/// `acl/src/aclnn/generated.rs`: one wrapper per operator.
pub fn acl_wrappers(ops: &[Op]) -> String {
    let mut s = String::from(
        "// @generated by `cargo xtask generate` from `acl-sys/operators.toml`. Do not edit.\n\
         //! The operators of the table, one function each: both phases of\n\
         //! `aclnnXxxGetWorkspaceSize` / `aclnnXxx` on a stream (see the module\n\
         //! docs of [`crate::aclnn`]).\n\n\
         #![allow(clippy::too_many_arguments, clippy::doc_markdown)]\n\
         #[allow(unused_imports)]\n\
         use super::{BoolArray, CubeMathType, FloatArray, IntArray, RotaryMode, Scalar, TensorArg, TensorArgMut, TensorList, MemUse, two_phase};\n\
         #[allow(unused_imports)]\n\
         use crate::memory::{Access, DataType};\n\
         use crate::Stream;\n\
         use crate::error::Result;\n\n",
    );
    for op in ops {
        acl_wrapper(&mut s, op);
    }
    s
}

fn acl_wrapper(s: &mut String, op: &Op) {
    let mut params = Vec::new();
    let mut raws = Vec::new();
    let mut uses = Vec::new();
    let mut dynamic = false;
    for (i, a) in op.args.iter().enumerate() {
        let n = a.rust_name();
        let p = format!("p{i}");
        let cast = |expr: String| -> String {
            // Every handle's raw form is `*const` for inputs and `*mut` for
            // outputs; the declaration decides the pointer's constness.
            let is_mut_raw = matches!(a.role, Role::Out | Role::InOut | Role::OptOut);
            match (a.konst, is_mut_raw) {
                (true, true) => format!("{expr}.cast_const()"),
                (false, false) => format!("{expr}.cast_mut()"),
                _ => expr,
            }
        };
        match (a.kind, a.role) {
            (Kind::Tensor, Role::In) => {
                params.push(format!("{n}: &TensorArg<'_>"));
                raws.push(format!("let {p} = {};", cast(format!("{n}.as_raw()"))));
                uses.push(format!("{n}.mem_use()"));
            }
            (Kind::Tensor, Role::Opt) => {
                params.push(format!("{n}: Option<&TensorArg<'_>>"));
                raws.push(format!(
                    "let {p} = {};",
                    cast(format!("{n}.map_or(std::ptr::null(), |t| t.as_raw())"))
                ));
                uses.push(format!("@opt {n}.map(|t| t.mem_use())"));
                dynamic = true;
            }
            (Kind::Tensor, Role::Out | Role::InOut) => {
                params.push(format!("{n}: &mut TensorArgMut<'_>"));
                raws.push(format!("let {p} = {};", cast(format!("{n}.as_raw()"))));
                uses.push(format!("{n}.as_arg().mem_use()"));
            }
            (Kind::Tensor, Role::OptOut) => {
                params.push(format!("mut {n}: Option<&mut TensorArgMut<'_>>"));
                raws.push(format!(
                    "let {p} = {};",
                    cast(format!(
                        "{n}.as_mut().map_or(std::ptr::null_mut(), |t| t.as_raw())"
                    ))
                ));
                uses.push(format!("@opt {n}.as_ref().map(|t| t.as_arg().mem_use())"));
                dynamic = true;
            }
            (Kind::TensorList, Role::In) => {
                params.push(format!("{n}: &TensorList<'_>"));
                raws.push(format!("let {p} = {};", cast(format!("{n}.as_raw()"))));
                uses.push(format!("@list {n}.accesses()"));
                dynamic = true;
            }
            (Kind::Scalar | Kind::IntArray | Kind::FloatArray | Kind::BoolArray, role) => {
                let ty = match a.kind {
                    Kind::Scalar => "Scalar",
                    Kind::IntArray => "IntArray",
                    Kind::FloatArray => "FloatArray",
                    _ => "BoolArray",
                };
                if role == Role::Opt {
                    params.push(format!("{n}: Option<&{ty}>"));
                    raws.push(format!(
                        "let {p} = {};",
                        cast(format!("{n}.map_or(std::ptr::null(), |x| x.as_raw())"))
                    ));
                } else {
                    params.push(format!("{n}: &{ty}"));
                    raws.push(format!("let {p} = {};", cast(format!("{n}.as_raw()"))));
                }
            }
            (Kind::Str, role) => {
                if role == Role::Opt {
                    params.push(format!("{n}: Option<&std::ffi::CStr>"));
                    raws.push(format!(
                        "let {p} = {};",
                        cast(format!("{n}.map_or(std::ptr::null(), |x| x.as_ptr())"))
                    ));
                } else {
                    params.push(format!("{n}: &std::ffi::CStr"));
                    raws.push(format!("let {p} = {};", cast(format!("{n}.as_ptr()"))));
                }
            }
            (_, _) if a.rust_type.is_some() => {
                let ty = a.rust_type.as_deref().unwrap_or_default();
                params.push(format!("{n}: {ty}"));
                raws.push(format!("let {p} = {n} as {};", a.sys_type()));
            }
            (Kind::DataType, _) => {
                params.push(format!("{n}: DataType"));
                raws.push(format!("let {p} = {n}.to_raw();"));
            }
            (k, _) => {
                let ty = match k {
                    Kind::I64 => "i64",
                    Kind::I32 => "i32",
                    Kind::I8 => "i8",
                    Kind::U64 => "u64",
                    Kind::F64 => "f64",
                    Kind::F32 => "f32",
                    _ => "bool",
                };
                params.push(format!("{n}: {ty}"));
                raws.push(format!("let {p} = {n};"));
            }
        }
    }
    let _ = writeln!(s, "/// {}", summary(op));
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// Documented at {}.", op.page);
    if let Some(d) = &op.dtypes {
        let _ = writeln!(
            s,
            "/// Data types (the union over the page's products): {}.",
            doc_fact(d)
        );
    }
    if let Some(a2) = &op.dtypes_a2 {
        let _ = writeln!(
            s,
            "/// On Atlas A2 (Ascend910B): {}; other arguments as above.",
            doc_fact(a2)
        );
    }
    match (&op.dtypes_a2, &op.dtypes_a3) {
        (_, Some(a3)) => {
            let _ = writeln!(
                s,
                "/// On Atlas A3 (Ascend910\\_93): {}; other arguments as above.",
                doc_fact(a3)
            );
        }
        (Some(_), None) => {
            let _ = writeln!(s, "/// On Atlas A3 (Ascend910\\_93): as on Atlas A2.");
        }
        (None, None) => {}
    }
    if let Some(f) = &op.format {
        let _ = writeln!(s, "/// Formats: {}.", doc_fact(f));
    }
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// # Errors");
    let _ = writeln!(s, "///");
    match &op.errors {
        Some(e) => {
            let _ = writeln!(
                s,
                "/// The aclnn status as documented ({}), or a stream or memory error.",
                doc_fact(e)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "/// The aclnn status (`161001` for a null argument, `161002` for dtypes or \
                 shapes the operator does not take), or a stream or memory error."
            );
        }
    }
    let _ = writeln!(s, "#[doc(alias = \"aclnn{}\")]", op.name);
    let _ = writeln!(s, "#[doc(alias = \"aclnn{}GetWorkspaceSize\")]", op.name);
    let _ = writeln!(
        s,
        "pub fn {}(stream: &Stream{}{}) -> Result<()> {{",
        op.rust,
        if params.is_empty() { "" } else { ", " },
        params.join(", ")
    );
    if dynamic {
        let _ = writeln!(
            s,
            "    let mut uses: smallvec::SmallVec<[MemUse<'_>; 6]> = smallvec::SmallVec::new();"
        );
        for u in &uses {
            if let Some(rest) = u.strip_prefix("@opt ") {
                let _ = writeln!(s, "    uses.extend({rest});");
            } else if let Some(rest) = u.strip_prefix("@list ") {
                let _ = writeln!(s, "    uses.extend({rest}.iter().map(Access::as_use));");
            } else {
                let _ = writeln!(s, "    uses.push({u});");
            }
        }
    } else {
        let _ = writeln!(s, "    let uses = [{}];", uses.join(", "));
    }
    for r in &raws {
        let _ = writeln!(s, "    {r}");
    }
    let ps: Vec<String> = (0..op.args.len()).map(|i| format!("p{i}")).collect();
    let _ = writeln!(
        s,
        "    let (names, plan, launch) = crate::result::aclnn_op!(aclnn{0}GetWorkspaceSize({1}), aclnn{0});",
        op.name,
        ps.join(", ")
    );
    let _ = writeln!(s, "    two_phase(stream, names, &uses, plan, launch)");
    let _ = writeln!(s, "}}\n");
}

/// `cann-sim/src/aclnn/generated.rs`: the exports of every operator the
/// simulator plans.
pub fn sim_exports(ops: &[Op]) -> String {
    let mut s = String::from(
        "// @generated by `cargo xtask generate` from `acl-sys/operators.toml`. Do not edit.\n\
         //! The exports of the operators the simulator plans: each\n\
         //! `aclnnXxxGetWorkspaceSize` runs the table's planning expression\n\
         //! through [`get_workspace_size`], each `aclnnXxx` runs the executor\n\
         //! ([`run_executor`]). Operators of the table without a kernel are in\n\
         //! `unsupported.rs` (561003).\n\n\
         #![allow(non_snake_case, unused_imports, unused_variables)]\n\
         use super::operators::*;\n\
         use super::transformer::*;\n\
         use super::inplace::*;\n\
         use super::nn::*;\n\
         use super::table_dtypes::documented_dtypes;\n\
         use crate::ops::{AttrValue, Attrs};\n\
         use crate::ops::nn::BinaryKind;\n\
         use acl_sys::aclnn::*;\n\
         use acl_sys::{aclDataType, aclrtStream};\n\
         use std::ffi::c_void;\n\n",
    );
    for op in ops {
        let Some(sim) = &op.sim else { continue };
        let checks = documented_dtype_checks(op);
        let sim = if checks.is_empty() {
            sim.clone()
        } else {
            format!(
                "{{ documented_dtypes(f, &[{}])?; {sim} }}",
                checks.join(", ")
            )
        };
        let params: Vec<String> = op
            .args
            .iter()
            .map(|a| {
                let t = a.sys_type().replace("crate::aclDataType", "aclDataType");
                format!("{}: {t}", a.sys_name())
            })
            .collect();
        let _ = writeln!(
            s,
            "/// `aclnn{0}GetWorkspaceSize`: {1}\n///\n/// # Safety\n///\n/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.\n#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn aclnn{0}GetWorkspaceSize({2}{3}workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus {{\n    // SAFETY: the out-pointers are the caller's, as documented.\n    unsafe {{ get_workspace_size(\"aclnn{0}GetWorkspaceSize\", workspaceSize, executor, |f| {4}) }}\n}}\n",
            op.name,
            summary(op),
            params.join(", "),
            if params.is_empty() { "" } else { ", " },
            sim
        );
        let _ = writeln!(
            s,
            "/// `aclnn{0}`: runs the executor of `aclnn{0}GetWorkspaceSize` on `stream`.\n///\n/// # Safety\n///\n/// None: the executor and stream are looked up; the workspace is not touched.\n#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn aclnn{0}(workspace: *mut c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: aclrtStream) -> aclnnStatus {{\n    run_executor(\"aclnn{0}\", workspace, workspaceSize, executor, stream)\n}}\n",
            op.name
        );
    }
    s
}

/// The `aclDataType` constant of a dtype the table names; `None` for names
/// that stand for a rule (`=self`) rather than a type.
fn acl_dtype(name: &str) -> Option<&'static str> {
    Some(match name {
        "f32" => "ACL_FLOAT",
        "f16" => "ACL_FLOAT16",
        "bf16" => "ACL_BF16",
        "f64" => "ACL_DOUBLE",
        "i4" => "ACL_INT4",
        "i8" => "ACL_INT8",
        "i16" => "ACL_INT16",
        "i32" => "ACL_INT32",
        "i64" => "ACL_INT64",
        "u8" => "ACL_UINT8",
        "u16" => "ACL_UINT16",
        "u32" => "ACL_UINT32",
        "u64" => "ACL_UINT64",
        "bool" => "ACL_BOOL",
        "c32" => "ACL_COMPLEX32",
        "c64" => "ACL_COMPLEX64",
        "c128" => "ACL_COMPLEX128",
        "hif8" => "ACL_HIFLOAT8",
        "f8e5m2" => "ACL_FLOAT8_E5M2",
        "f8e4m3" => "ACL_FLOAT8_E4M3FN",
        "f8e8m0" => "ACL_FLOAT8_E8M0",
        "f4e2m1" => "ACL_FLOAT4_E2M1",
        "f4e1m2" => "ACL_FLOAT4_E1M2",
        _ => return None,
    })
}

/// The dtype lists of an operator's tensor and tensor-list arguments, as
/// the `(name, handle, is_list, optional, union, a2, a3)` entries the
/// simulator's `documented_dtypes` checks: the page's union (`dtypes`) and,
/// where the page narrows it, the lists of the Atlas A2 and A3 parts
/// (`dtypes_a2`, `dtypes_a3`; `None`: the product takes the union's list;
/// A3 takes A2's lists unless `dtypes_a3` is given). The simulator checks
/// the list of the SoC it runs as. An argument whose union names a rule
/// (`=self`) instead of types is not checked here (its kernel checks it).
fn documented_dtype_checks(op: &Op) -> Vec<String> {
    let Some(dtypes) = &op.dtypes else {
        return Vec::new();
    };
    let a2 = op.dtypes_a2.as_deref().map(dtype_lists).unwrap_or_default();
    let a3 = match &op.dtypes_a3 {
        Some(t) => dtype_lists(t),
        None => a2.clone(),
    };
    let consts = |types: &[&str]| -> Option<String> {
        let types: Option<Vec<String>> = types
            .iter()
            .map(|t| acl_dtype(t).map(|c| format!("acl_sys::{c}")))
            .collect();
        Some(format!("&[{}]", types?.join(", ")))
    };
    let product = |lists: &[(&str, Vec<&str>)], name: &str| -> String {
        lists
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, types)| consts(types))
            .map_or_else(|| "None".to_string(), |c| format!("Some({c})"))
    };
    let mut checks = Vec::new();
    for (name, types) in dtype_lists(dtypes) {
        let Some(arg) = op.args.iter().find(|a| a.c_name == name) else {
            continue;
        };
        let is_list = match arg.kind {
            Kind::Tensor => false,
            Kind::TensorList => true,
            _ => continue,
        };
        let Some(union) = consts(&types) else {
            continue;
        };
        let optional = matches!(arg.role, Role::Opt | Role::OptOut);
        checks.push(format!(
            "(\"{name}\", {} as usize, {is_list}, {optional}, {union}, {}, {})",
            arg.sys_name(),
            product(&a2, name),
            product(&a3, name),
        ));
    }
    checks
}

/// The operator section of `docs/COVERAGE.md`.
pub fn coverage_rows(ops: &[Op]) -> String {
    let mut s = String::new();
    let planned = ops.iter().filter(|o| o.sim.is_some()).count();
    let _ = writeln!(
        s,
        "## aclnn operators\n\n{} operators in `acl-sys/operators.toml`, each declared in \
         `acl_sys::aclnn` and wrapped in `acl::aclnn`; cann-sim has a kernel for {planned} \
         (the others answer 561003, \"no kernel\").\n",
        ops.len()
    );
    s.push_str("| operator | `acl::aclnn` | cann-sim | documented at |\n|---|---|---|---|\n");
    for op in ops {
        let _ = writeln!(
            s,
            "| `aclnn{}` | `{}` | {} | {} |",
            op.name,
            op.rust,
            if op.sim.is_some() { "yes" } else { "—" },
            op.page.replace('|', "\\|")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_follows_the_naming_rule() {
        assert_eq!(snake("gradOutput"), "grad_output");
        assert_eq!(snake("NLLLoss"), "nll_loss");
        assert_eq!(snake("Log1p"), "log1p");
        assert_eq!(snake("selfRef"), "self_ref");
        assert_eq!(snake("BatchMatMul"), "batch_mat_mul");
        assert_eq!(rust_name("InplaceAdd"), "add_");
        assert_eq!(rust_name("RmsNorm"), "rms_norm");
        assert_eq!(rust_name("Inplace"), "inplace");
    }

    #[test]
    fn an_argument_spells_its_role_and_constness() {
        let a = parse_arg("X", "out: aclTensor* [out]").unwrap();
        assert_eq!((a.kind, a.konst, a.role), (Kind::Tensor, false, Role::Out));
        let a = parse_arg("X", "bias: const aclTensor* [opt]").unwrap();
        assert_eq!((a.kind, a.konst, a.role), (Kind::Tensor, true, Role::Opt));
        assert_eq!(a.sys_type(), "*const aclTensor");
        let e = parse_arg("X", "alpha: const aclScalar* [out]").unwrap_err();
        assert!(e.contains("only tensors are written"), "{e}");
        let e = parse_arg("X", "n: size_t").unwrap_err();
        assert!(e.contains("unknown C type `size_t`"), "{e}");
    }

    /// `check_product_lists` of a one-operator table `Argsort(self, dim, out)`
    /// with the given dtype fields.
    fn product_lists(fields: &str) -> Result<(), String> {
        let text = format!(
            "[[op]]\nname = \"Argsort\"\ndoc = ''\npage = ''\n\
             args = ['self: const aclTensor*', 'dim: int64_t', 'out: aclTensor* [out]']\n{fields}"
        );
        let file: File = toml::from_str(&text).map_err(|e| e.to_string())?;
        let raw = &file.op[0];
        let args: Vec<Arg> = raw
            .args
            .iter()
            .map(|a| parse_arg(&raw.name, a))
            .collect::<Result<_, _>>()?;
        check_product_lists(raw, &args)
    }

    #[test]
    fn a_per_product_list_is_a_subset_of_the_union_for_an_argument_it_names() {
        let union = "dtypes = 'self {bf16,f16,u16}; dim {i64}; out {i64}'\n";
        product_lists(&format!("{union}dtypes_a2 = 'self {{bf16,f16}}'")).unwrap();
        product_lists(&format!("{union}dtypes_a3 = 'self {{f16}}'")).unwrap();
        let e = product_lists(&format!("{union}dtypes_a2 = 'self {{f16,f32}}'")).unwrap_err();
        assert!(
            e.contains("self: f32 is not in the union `{bf16,f16,u16}`"),
            "{e}"
        );
        let e = product_lists(&format!("{union}dtypes_a2 = 'other {{f16}}'")).unwrap_err();
        assert!(e.contains("other is not an argument"), "{e}");
        let e = product_lists(&format!("{union}dtypes_a2 = 'self {{f16}}; self {{bf16}}'"))
            .unwrap_err();
        assert!(e.contains("self is listed twice"), "{e}");
        let e = product_lists(&format!("{union}dtypes_a3 = 'self {{half}}'")).unwrap_err();
        assert!(e.contains("`half` is not a data type"), "{e}");
        let e = product_lists(&format!("{union}dtypes_a2 = 'self f16'")).unwrap_err();
        assert!(e.contains("is not `argument {types}; ...`"), "{e}");
        let e =
            product_lists("dtypes = 'self {f16}; out {i64}'\ndtypes_a2 = 'dim {i64}'").unwrap_err();
        assert!(e.contains("dim has no list in `dtypes`"), "{e}");
        let e = product_lists("dtypes = 'self {f16} | A2 notes: self: excl {bf16}'").unwrap_err();
        assert!(e.contains("per-product lists go into"), "{e}");
    }

    #[test]
    fn the_sim_check_carries_the_a2_list_and_a3_takes_it_unless_given_its_own() {
        let ops = load(&crate::workspace_root()).unwrap();
        let find = |name: &str| ops.iter().find(|o| o.name == name).unwrap();
        let argsort = documented_dtype_checks(find("Argsort"));
        assert_eq!(argsort.len(), 2, "{argsort:?}");
        assert!(
            argsort[0].starts_with("(\"self\", self_ as usize, false, false, &[acl_sys::ACL_BF16")
                && argsort[0].contains("ACL_UINT16")
                && argsort[0].matches("Some(").count() == 2
                && argsort[0].ends_with("acl_sys::ACL_UINT8]))"),
            "{}",
            argsort[0]
        );
        assert!(argsort[1].ends_with(", None, None)"), "{}", argsort[1]);
        let cummax = documented_dtype_checks(find("Cummax"));
        assert!(
            cummax[0].contains("ACL_BF16], None, Some(&[acl_sys::ACL_FLOAT16"),
            "{}",
            cummax[0]
        );
    }

    #[test]
    fn the_table_loads_and_names_every_operator_once() {
        let ops = load(&crate::workspace_root()).unwrap();
        assert!(ops.len() >= 50);
        assert!(ops.iter().any(|o| o.name == "Add" && o.sim.is_some()));
    }
}

//! `cargo xtask generate [--check]`: generates cann-sim's exports that are
//! not implemented (each returns the library's "not supported" code and
//! records a message naming itself) and the tables `cann_sim::install()`
//! installs into the -sys crates (and, through `error_codes.rs`, the `acl`
//! crate's `ErrorCode`). The function list comes from the checked-in
//! bindings; the implemented set from the `extern "C" fn` items in
//! `cann-sim/src/<lib>/` (everything but the generated files).

use crate::{workspace_root, write_or_check};
use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use std::collections::BTreeSet;
use std::path::Path;

/// One C library the simulator stands in for.
struct SimLib {
    /// Module under `cann-sim/src/` and prefix in messages.
    module: &'static str,
    /// The -sys crate's Rust name.
    sys: &'static str,
    /// Its checked-in bindings.
    bindings: &'static str,
    /// Return type name → the value a not-supported stub returns.
    codes: &'static [(&'static str, &'static str)],
    /// Function in the table builder's name.
    table_fn: &'static str,
}

const LIBS: [SimLib; 4] = [
    SimLib {
        module: "acl",
        sys: "acl_sys",
        bindings: "acl-sys/src/bindings.rs",
        codes: &[
            ("aclError", "acl_sys::ACL_ERROR_API_NOT_SUPPORT"),
            ("aclDataType", "acl_sys::ACL_DT_UNDEFINED"),
            ("aclFormat", "acl_sys::ACL_FORMAT_UNDEFINED"),
            // hicann/runtime src/acl/acl_tdt_channel/tensor_data_transfer.cpp,
            // acltdtGetTensorTypeFromItem: its failure value (zero would be
            // ACL_TENSOR_DATA_TENSOR, a valid answer).
            ("acltdtTensorType", "acl_sys::ACL_TENSOR_DATA_UNDEFINED"),
        ],
        table_fn: "acl_api",
    },
    SimLib {
        module: "hccl",
        sys: "hccl_sys",
        bindings: "hccl-sys/src/bindings.rs",
        codes: &[("HcclResult", "hccl_sys::HCCL_E_NOT_SUPPORT")],
        table_fn: "hccl_api",
    },
    SimLib {
        module: "dcmi",
        sys: "dcmi_sys",
        bindings: "dcmi-sys/src/bindings.rs",
        codes: &[("c_int", "dcmi_sys::DCMI_ERR_CODE_NOT_SUPPORT")],
        table_fn: "dcmi_api",
    },
    SimLib {
        module: "aclnn",
        sys: "acl_sys::aclnn",
        bindings: "acl-sys/src/aclnn/bindings.rs",
        // aclnn documents no "not supported" status: a missing operator is
        // ACLNN_ERR_INNER_FIND_KERNEL_ERROR (561003), "no NPU kernel found".
        codes: &[(
            "aclnnStatus",
            "acl_sys::aclnn::ACLNN_ERR_INNER_FIND_KERNEL_ERROR",
        )],
        table_fn: "aclnn_api",
    },
];

/// The libraries cann-sim stands in for: (its module under `cann-sim/src/`,
/// the checked-in bindings listing their functions).
pub(crate) fn libraries() -> impl Iterator<Item = (&'static str, &'static str)> {
    LIBS.iter().map(|lib| (lib.module, lib.bindings))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let check = crate::check_flag(args, "generate")?;
    let root = workspace_root();
    // The operator table first: the aclnn bindings, wrappers and exports it
    // makes are inputs of the stubs and tables below.
    let mut fresh = operators(&root, check)?;
    fresh &= generate(&root, check)?;
    fresh &= crate::error_codes::generate(&root, check)?;
    if check && !fresh {
        return Err("cann-sim's generated exports are stale; run `cargo xtask generate`".into());
    }
    if check {
        println!("generated files are current");
    }
    Ok(())
}

/// Generates (or checks) what the operator table makes: the aclnn
/// bindings, `acl::aclnn`'s wrappers and cann-sim's operator exports.
pub fn operators(root: &Path, check: bool) -> Result<bool, String> {
    let ops = crate::operators::load(root)?;
    let mut fresh = crate::bindings::aclnn(root, check)?;
    fresh &= write_or_check(
        &root.join("acl/src/aclnn/generated.rs"),
        &crate::operators::acl_wrappers(&ops),
        check,
    )?;
    fresh &= write_or_check(
        &root.join("cann-sim/src/aclnn/generated.rs"),
        &crate::operators::sim_exports(&ops),
        check,
    )?;
    Ok(fresh)
}

/// Generates (or checks) every file; returns whether all were current.
pub fn generate(root: &Path, check: bool) -> Result<bool, String> {
    let mut fresh = true;
    let mut tables = Vec::new();
    for lib in &LIBS {
        if !root.join("cann-sim/src").join(lib.module).is_dir() {
            continue;
        }
        let src_path = root.join(lib.bindings);
        let src = std::fs::read_to_string(&src_path)
            .map_err(|e| format!("{}: {e}", src_path.display()))?;
        let functions = api_functions(&src)?;
        let implemented = implemented(&root.join("cann-sim/src").join(lib.module))?;
        for name in &implemented {
            if !functions.iter().any(|f| &f.sig.ident.to_string() == name) {
                return Err(format!(
                    "cann-sim/src/{}/ implements {name}, which is not in {}",
                    lib.module, lib.bindings
                ));
            }
        }
        let stubs = functions
            .iter()
            .filter(|f| !implemented.contains(&f.sig.ident.to_string()) && f.sig.variadic.is_none())
            .map(|f| stub(lib, f))
            .collect::<Result<Vec<_>, _>>()?;
        let sys_glob: syn::Path =
            syn::parse_str(lib.sys).map_err(|e| format!("{}: {e}", lib.sys))?;
        let file = quote! {
            #![allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
            //! Generated by `cargo xtask generate`: every function the simulator
            //! does not implement. Each records a message naming itself (read it with
            //! `aclGetRecentErrMsg`) and returns the library's "not supported" code
            //! (or a null pointer / zero for functions that return no code).
            #[allow(unused_imports)]
            use ::core::ffi::*;
            #[allow(unused_imports)]
            use acl_sys::*;
            #[allow(unused_imports)]
            use #sys_glob::*;
            #(#stubs)*
        };
        let text = render(file)?;
        fresh &= write_or_check(
            &root
                .join("cann-sim/src")
                .join(lib.module)
                .join("unsupported.rs"),
            &text,
            check,
        )?;

        let sys = sys_glob.clone();
        let module = format_ident!("{}", lib.module);
        let table_fn = format_ident!("{}", lib.table_fn);
        // AscendCL and HCCL functions are dated by `acl_sys::since`: a
        // simulator presenting an older runtime (`CANN_SIM_ACL_VERSION`)
        // leaves out those that runtime lacks.
        let dated = matches!(lib.module, "acl" | "hccl");
        let fields = functions.iter().map(|f| {
            let name = &f.sig.ident;
            let cname = name.to_string();
            if f.sig.variadic.is_some() {
                quote!(#name: None,)
            } else if dated {
                quote!(#name: crate::present(#cname, crate::#module::#name),)
            } else {
                quote!(#name: Some(crate::#module::#name),)
            }
        });
        let doc = format!(
            "The simulator's {} table: every function of `{}`, implemented or not supported.",
            lib.module, lib.sys
        );
        tables.push(quote! {
            #[doc = #doc]
            pub fn #table_fn() -> #sys::Api {
                #sys::Api { #(#fields)* }
            }
        });
    }
    let file = quote! {
        //! Generated by `cargo xtask generate`: the function tables that
        //! `cann_sim::install()` puts into the -sys crates. Each entry is the
        //! simulator's own export, so its signature is checked against the
        //! bindings by the compiler.
        #(#tables)*
    };
    fresh &= write_or_check(&root.join("cann-sim/src/tables.rs"), &render(file)?, check)?;
    Ok(fresh)
}

fn render(tokens: TokenStream) -> Result<String, String> {
    let file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;
    // Token streams carry no comments: the `SAFETY` comment of the stubs'
    // one `unsafe` block is added to the rendered text.
    let mut body = String::new();
    for line in prettyplease::unparse(&file).lines() {
        if line.trim() == "unsafe { ::core::mem::zeroed() }" {
            let indent = &line[..line.len() - line.trim_start().len()];
            body.push_str(indent);
            body.push_str(
                "// SAFETY: zero is a valid value of every such return type (an integer, a float \
                 or a null pointer).\n",
            );
        }
        body.push_str(line);
        body.push('\n');
    }
    Ok(format!(
        "// @generated by `cargo xtask generate`. Do not edit.\n\n{body}"
    ))
}

/// The C functions declared in a generated bindings file: the free wrapper
/// functions are skipped, so the declarations are recovered from the `Api`
/// struct's fields.
pub(crate) fn api_functions(bindings: &str) -> Result<Vec<syn::ForeignItemFn>, String> {
    let file = syn::parse_file(bindings).map_err(|e| format!("cannot parse bindings: {e}"))?;
    let api = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Struct(s) if s.ident == "Api" => Some(s),
            _ => None,
        })
        .ok_or("bindings have no `Api` struct")?;
    let mut out = Vec::new();
    for field in &api.fields {
        let name = field.ident.clone().ok_or("unnamed Api field")?;
        let bare = option_fn(&field.ty).ok_or_else(|| format!("Api::{name} is not Option<fn>"))?;
        let inputs = bare.inputs.iter().enumerate().map(|(i, a)| {
            let ty = &a.ty;
            let arg = a
                .name
                .as_ref()
                .map(|(n, _)| format_ident!("_{}", n.to_string().trim_start_matches('_')))
                .unwrap_or_else(|| format_ident!("_arg{i}"));
            quote!(#arg: #ty)
        });
        let variadic = bare.variadic.as_ref().map(|_| quote!(, ...));
        let output = &bare.output;
        let item: syn::ForeignItemFn =
            syn::parse2(quote!(pub fn #name(#(#inputs),* #variadic) #output;))
                .map_err(|e| format!("{name}: {e}"))?;
        out.push(item);
    }
    Ok(out)
}

fn option_fn(ty: &syn::Type) -> Option<&syn::TypeBareFn> {
    let syn::Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(syn::Type::BareFn(f)) => Some(f),
        _ => None,
    }
}

/// The `extern "C" fn` names defined in `dir`'s hand-written files: items,
/// and the `extern "C" fn NAME` a top-level macro invocation lists (a macro
/// that generates several exports of one shape names each one that way).
pub(crate) fn implemented(dir: &Path) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.extension().is_none_or(|e| e != "rs")
            || path.file_name().is_some_and(|n| n == "unsupported.rs")
        {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for item in file.items {
            if let syn::Item::Fn(f) = &item
                && f.sig
                    .abi
                    .as_ref()
                    .is_some_and(|a| a.name.as_ref().is_some_and(|n| n.value() == "C"))
            {
                out.insert(f.sig.ident.to_string());
            } else if let syn::Item::Macro(m) = item {
                macro_exports(m.mac.tokens, &mut out);
            }
        }
    }
    Ok(out)
}

/// Adds the `NAME` of every `extern "C" fn NAME` in `tokens` (at any depth).
fn macro_exports(tokens: TokenStream, out: &mut BTreeSet<String>) {
    use proc_macro2::TokenTree;
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, t) in trees.iter().enumerate() {
        match (t, trees.get(i + 1), trees.get(i + 2), trees.get(i + 3)) {
            (TokenTree::Group(g), ..) => macro_exports(g.stream(), out),
            (
                TokenTree::Ident(e),
                Some(TokenTree::Literal(abi)),
                Some(TokenTree::Ident(f)),
                Some(TokenTree::Ident(name)),
            ) if e == "extern" && abi.to_string() == "\"C\"" && f == "fn" => {
                out.insert(name.to_string());
            }
            _ => {}
        }
    }
}

/// `tokens` with each `crate` path root replaced by `sys`: the
/// declarations name their own crate's types (`crate::aclrtStream` in the
/// aclnn declarations), which the simulator reaches by the -sys crate's name
/// (the first segment of `sys`: `acl_sys` for `acl_sys::aclnn`).
fn rebase_crate(tokens: TokenStream, sys: &str) -> TokenStream {
    use proc_macro2::{Group, Ident, TokenTree};
    let sys = sys.split("::").next().unwrap_or(sys);
    tokens
        .into_iter()
        .map(|t| match t {
            TokenTree::Ident(i) if i == "crate" => TokenTree::Ident(Ident::new(sys, i.span())),
            TokenTree::Group(g) => {
                let mut out = Group::new(g.delimiter(), rebase_crate(g.stream(), sys));
                out.set_span(g.span());
                TokenTree::Group(out)
            }
            other => other,
        })
        .collect()
}

fn stub(lib: &SimLib, f: &syn::ForeignItemFn) -> Result<TokenStream, String> {
    let name = &f.sig.ident;
    let cname = name.to_string();
    let inputs = rebase_crate(f.sig.inputs.to_token_stream(), lib.sys);
    let output = rebase_crate(f.sig.output.to_token_stream(), lib.sys);
    let value = match &f.sig.output {
        syn::ReturnType::Default => quote!(),
        syn::ReturnType::Type(_, ty) => {
            let last = match &**ty {
                syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            };
            match last.and_then(|l| lib.codes.iter().find(|(t, _)| *t == l)) {
                Some((_, code)) => code.parse::<TokenStream>().map_err(|e| e.to_string())?,
                // Zero is a valid integer, float or null pointer, the only
                // other return types (`render` writes the SAFETY comment).
                None => quote!(unsafe { ::core::mem::zeroed() }),
            }
        }
    };
    let doc = format!("`{cname}`: not supported by cann-sim.");
    Ok(quote! {
        #[doc = #doc]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn #name(#inputs) #output {
            crate::recent_error::not_supported(#cname);
            #value
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_macro_invocation_counts_the_exports_it_names_and_a_definition_none() {
        let file: syn::File = syn::parse_str(
            r#"
            macro_rules! exports {
                ($(extern "C" fn $n:ident;)*) => {$(pub unsafe extern "C" fn $n() {})*};
            }
            exports! {
                /// Docs.
                extern "C" fn aclnnA;
                extern "C" fn aclnnB;
            }
            nested! { { extern "C" fn aclnnC(x, "Op"); } extern "Rust" fn not_c; }
            "#,
        )
        .unwrap();
        let mut out = BTreeSet::new();
        for item in file.items {
            if let syn::Item::Macro(m) = item {
                macro_exports(m.mac.tokens, &mut out);
            }
        }
        assert_eq!(
            out.into_iter().collect::<Vec<_>>(),
            ["aclnnA", "aclnnB", "aclnnC"]
        );
    }

    #[test]
    fn a_stub_names_the_sys_crate_where_the_declaration_says_crate() {
        let f: syn::ForeignItemFn = syn::parse_str(
            "pub fn aclnnX(workspace: *mut ::core::ffi::c_void, stream: crate::aclrtStream) -> aclnnStatus;",
        )
        .unwrap();
        let got = rebase_crate(f.sig.inputs.to_token_stream(), "acl_sys").to_string();
        assert_eq!(
            got,
            "workspace : * mut :: core :: ffi :: c_void , stream : acl_sys :: aclrtStream"
        );
    }
}

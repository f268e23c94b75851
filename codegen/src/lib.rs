//! The code generator of the CANN -sys crates: turns bindgen's output (or
//! hand-written `extern "C"` declarations) into the loader-based form that
//! `cann-acl-sys`, `hccl-sys` and `dcmi-sys` use. A tool, not a run-time
//! dependency: `cargo xtask bindgen` runs it to produce the checked-in
//! bindings, and the -sys crates' build scripts run it only with their
//! `bindgen` feature. The generated code loads through the `cann-loader`
//! crate.
//!
//! Input: a Rust file with type items and `extern "C" { fn ...; }` blocks.
//! Output: the same type items, and for the functions
//!
//! - `pub struct Api`, one `Option<unsafe extern "C" fn(..)>` field per function;
//! - `Api::SYMBOLS`, `Api::empty()`, `Api::from_resolver(..)`, `Api::resolved_count()`;
//! - one free function per C function with the C name, which calls through the
//!   crate's global library (`crate::library()`) and returns
//!   `Result<ReturnType, LoadError>`. Variadic functions get no free function
//!   (stable Rust cannot forward C variadics); call them through the field.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Where the declarations came from, written at the top of the generated file.
pub struct Provenance<'a> {
    /// E.g. `"torch-npu 2.14.0 wheel (torch_npu/include/third_party/acl/inc), ACL 1.17.0"`.
    pub headers: &'a str,
    /// E.g. `"bindgen 0.72.1"`, or `"hand-written declarations"`.
    pub generator: &'a str,
    /// The command that regenerates the file.
    pub command: &'a str,
    /// `use` lines placed before the items (e.g. where `LoadError` comes from).
    pub prelude: &'a str,
    /// The path of the function the wrappers load the library through
    /// (`"crate::library"` for a crate-level library, `"crate::aclnn::library"`
    /// for one held by a module).
    pub library_fn: &'a str,
}

/// One C function.
pub struct Function {
    /// Its C name.
    pub name: String,
    /// Is it C-variadic?
    pub variadic: bool,
    /// The parsed declaration.
    pub decl: syn::ForeignItemFn,
}

/// Splits a file into its non-function items and its functions.
///
/// # Errors
///
/// When the source does not parse as Rust, or a function carries a
/// `link_name` that differs from its Rust name (C++ mangling).
pub fn split(source: &str) -> Result<(Vec<syn::Item>, Vec<Function>), String> {
    let file = syn::parse_file(source).map_err(|e| format!("cannot parse bindings: {e}"))?;
    let mut items = Vec::new();
    let mut functions = Vec::new();
    for item in file.items {
        match item {
            syn::Item::ForeignMod(fm) => {
                for fi in fm.items {
                    match fi {
                        syn::ForeignItem::Fn(f) => {
                            if let Some(attr) =
                                f.attrs.iter().find(|a| a.path().is_ident("link_name"))
                            {
                                return Err(format!(
                                    "{} has a link_name attribute ({}): the header declares it outside extern \"C\"",
                                    f.sig.ident,
                                    quote!(#attr)
                                ));
                            }
                            functions.push(Function {
                                name: f.sig.ident.to_string(),
                                variadic: f.sig.variadic.is_some(),
                                decl: f,
                            });
                        }
                        other => {
                            items.push(syn::Item::Verbatim(quote!(unsafe extern "C" { #other })))
                        }
                    }
                }
            }
            other => items.push(other),
        }
    }
    functions.sort_by(|a, b| a.name.cmp(&b.name));
    functions.dedup_by(|a, b| a.name == b.name);
    Ok((items, functions))
}

fn fn_pointer_type(f: &syn::ForeignItemFn) -> TokenStream {
    let inputs = f.sig.inputs.iter().map(|arg| match arg {
        syn::FnArg::Typed(pt) => {
            let ty = &pt.ty;
            quote!(#ty)
        }
        syn::FnArg::Receiver(_) => quote!(),
    });
    let variadic = if f.sig.variadic.is_some() {
        quote!(, ...)
    } else {
        quote!()
    };
    let output = &f.sig.output;
    quote!(unsafe extern "C" fn(#(#inputs),* #variadic) #output)
}

fn arg_names(f: &syn::ForeignItemFn) -> Vec<Ident> {
    f.sig
        .inputs
        .iter()
        .enumerate()
        .map(|(i, arg)| match arg {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => pi.ident.clone(),
                _ => format_ident!("arg{i}"),
            },
            syn::FnArg::Receiver(_) => format_ident!("arg{i}"),
        })
        .collect()
}

/// Renders the loader-based module for `items` and `functions`.
pub fn render(
    provenance: &Provenance<'_>,
    items: &[syn::Item],
    functions: &[Function],
) -> Result<String, String> {
    let fields = functions.iter().map(|f| {
        let name = &f.decl.sig.ident;
        let ty = fn_pointer_type(&f.decl);
        let doc = format!("`{}`, or `None` when the loaded library lacks it.", f.name);
        quote!(#[doc = #doc] pub #name: Option<#ty>,)
    });
    let names = functions.iter().map(|f| f.name.as_str());
    let count = functions.len();
    let empties = functions.iter().map(|f| {
        let name = &f.decl.sig.ident;
        quote!(#name: None,)
    });
    let resolves = functions.iter().map(|f| {
        let name = &f.decl.sig.ident;
        let cname = syn::LitCStr::new(
            &std::ffi::CString::new(f.name.clone())
                .map_err(|e| e.to_string())
                .unwrap_or_default(),
            proc_macro2::Span::call_site(),
        );
        quote! {
            #name: {
                let p = resolve(#cname);
                if p.is_null() {
                    None
                } else {
                    // SAFETY: `p` is the address of the exported symbol of
                    // this name, whose C type is the declared one.
                    Some(unsafe { ::core::mem::transmute::<*mut ::core::ffi::c_void, _>(p) })
                }
            },
        }
    });
    let counts = functions.iter().map(|f| {
        let name = &f.decl.sig.ident;
        quote!(usize::from(self.#name.is_some()))
    });
    let library_fn: syn::Path = syn::parse_str(provenance.library_fn)
        .map_err(|e| format!("library_fn {:?}: {e}", provenance.library_fn))?;
    let wrappers = functions.iter().filter(|f| !f.variadic).map(|f| {
        let name = &f.decl.sig.ident;
        let cname = &f.name;
        let inputs = &f.decl.sig.inputs;
        let args = arg_names(&f.decl);
        let ret = match &f.decl.sig.output {
            syn::ReturnType::Default => quote!(()),
            syn::ReturnType::Type(_, ty) => quote!(#ty),
        };
        let doc = format!(
            "Calls `{cname}` in the loaded library.\n\n# Errors\n\n[`LoadError`] when no library can be loaded or it lacks `{cname}`.\n\n# Safety\n\nThe C function's contract applies: see the CANN documentation of `{cname}`."
        );
        quote! {
            #[doc = #doc]
            #[inline]
            pub unsafe fn #name(#inputs) -> Result<#ret, LoadError> {
                let lib = #library_fn()?;
                match lib.api.#name {
                    // SAFETY: the caller upholds the C contract; the pointer was
                    // resolved from a library exporting this symbol.
                    Some(f) => Ok(unsafe { f(#(#args),*) }),
                    None => Err(lib.missing(#cname)),
                }
            }
        }
    });
    let tokens = quote! {
        #(#items)*

        /// One function pointer per C function of the headers, filled at run
        /// time by the loader. A `None` field is a function the loaded library
        /// does not export.
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        pub struct Api {
            #(#fields)*
        }

        impl Api {
            /// The C name of every function, in field order.
            pub const SYMBOLS: [&'static str; #count] = [#(#names),*];

            /// A table with every function missing.
            pub const fn empty() -> Self {
                Api { #(#empties)* }
            }

            /// Fills every field with `resolve(name)`, a null address meaning absent.
            ///
            /// # Safety
            ///
            /// Each non-null address must be a function with the C signature of
            /// the header declaration of that name, callable for as long as the
            /// `Api` is used.
            pub unsafe fn from_resolver(resolve: &mut dyn FnMut(&::core::ffi::CStr) -> *mut ::core::ffi::c_void) -> Self {
                Api { #(#resolves)* }
            }

            /// How many functions are present.
            pub fn resolved_count(&self) -> usize {
                0 #(+ #counts)*
            }
        }

        impl ::core::fmt::Debug for Api {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct("Api")
                    .field("functions", &Self::SYMBOLS.len())
                    .field("resolved", &self.resolved_count())
                    .finish()
            }
        }

        #(#wrappers)*
    };
    let file: syn::File =
        syn::parse2(tokens).map_err(|e| format!("generated code does not parse: {e}"))?;
    let body = prettyplease::unparse(&file);
    Ok(format!(
        "// @generated by {}. Do not edit.\n// Headers: {}\n// Generator: {}\n// Functions: {}\n\n{}\n\n{}",
        provenance.command,
        provenance.headers,
        provenance.generator,
        count,
        provenance.prelude,
        body
    ))
}

/// Splits and renders in one step.
pub fn generate(provenance: &Provenance<'_>, source: &str) -> Result<String, String> {
    let (items, functions) = split(source)?;
    render(provenance, &items, &functions)
}

/// The `bindgen` feature of a -sys crate: its build script regenerates the
/// bindings from the local CANN install into `$OUT_DIR/bindings.rs`.
pub mod build {
    use super::{Provenance, generate, headers};
    use std::path::PathBuf;

    /// The header set a -sys crate is generated from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum HeaderSet {
        /// AscendCL ([`headers::ACL_HEADERS`]), for `cann-acl-sys`.
        AscendCl,
        /// HCCL ([`headers::HCCL_HEADERS`]), for `hccl-sys`.
        Hccl,
    }

    /// Regenerates the bindings of `set` from the headers under
    /// `$CANN_INCLUDE_DIR`, else `$ASCEND_HOME_PATH`, else
    /// `/usr/local/Ascend/ascend-toolkit/latest`, into
    /// `$OUT_DIR/bindings.rs`, with `prelude` before the items (see
    /// [`Provenance::prelude`]). Call it from a build script: it prints the
    /// `cargo:rerun-if-env-changed` lines for those variables.
    ///
    /// # Errors
    ///
    /// When no headers are found, bindgen fails (it needs libclang), or the
    /// file cannot be written; the message says which.
    pub fn regenerate(set: HeaderSet, prelude: &str) -> Result<(), String> {
        println!("cargo:rerun-if-env-changed=CANN_INCLUDE_DIR");
        println!("cargo:rerun-if-env-changed=ASCEND_HOME_PATH");
        let root = std::env::var_os("CANN_INCLUDE_DIR")
            .or_else(|| std::env::var_os("ASCEND_HOME_PATH"))
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"));
        let dirs = headers::HeaderDirs::find(&root)?;
        let (raw, headers) = match set {
            HeaderSet::AscendCl => {
                let version = dirs.acl_version().unwrap_or_else(|| "unknown".into());
                (
                    headers::bindgen_acl(&dirs)?,
                    format!("{} (ACL {version}, build time)", dirs.acl_inc.display()),
                )
            }
            HeaderSet::Hccl => (
                headers::bindgen_hccl(&dirs)?,
                format!("{} (build time)", dirs.hccl_inc.display()),
            ),
        };
        let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "the -sys crate".into());
        let command = format!("the `bindgen` feature of {package}");
        let prov = Provenance {
            headers: &headers,
            generator: "bindgen (build-time, feature `bindgen`)",
            command: &command,
            prelude,
            library_fn: "crate::library",
        };
        let out = generate(&prov, &raw)?;
        let dir = std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
        let path = PathBuf::from(dir).join("bindings.rs");
        std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Running bindgen over the real CANN headers (needs libclang at run time).
pub mod headers {
    use std::path::{Path, PathBuf};

    /// The AscendCL headers the bindings are generated from, relative to the
    /// directory that holds `acl/` (e.g. `torch_npu/include/third_party/acl/inc`
    /// or `$ASCEND_HOME_PATH/include`).
    pub const ACL_HEADERS: [&str; 8] = [
        "acl/acl.h",
        "acl/acl_op_compiler.h",
        "acl/acl_prof.h",
        "acl/acl_tdt.h",
        "acl/acl_tdt_queue.h",
        "acl/error_codes/rt_error_codes.h",
        "acl/error_codes/ge_error_codes.h",
        "acl/acl_base.h",
    ];

    /// The HCCL headers, relative to the directory that holds `hccl/`.
    pub const HCCL_HEADERS: [&str; 2] = ["hccl/hccl.h", "hccl/hccl_types.h"];

    /// Locations of one header set.
    #[derive(Debug, Clone)]
    pub struct HeaderDirs {
        /// Holds `acl/acl.h`.
        pub acl_inc: PathBuf,
        /// Holds `hccl/hccl.h`.
        pub hccl_inc: PathBuf,
        /// Extra include roots (the wheel's `include/` directory, so that
        /// `third_party/hccl/inc/...` resolves).
        pub extra: Vec<PathBuf>,
    }

    impl HeaderDirs {
        /// Finds the header directories under `root`, which may be a CANN
        /// install's `include/`, a CANN install root, the torch-npu wheel's
        /// `torch_npu/include` or the directory the wheel was unpacked into.
        pub fn find(root: &Path) -> Result<HeaderDirs, String> {
            let bases = [
                root.to_path_buf(),
                root.join("include"),
                root.join("torch_npu/include"),
            ];
            for base in &bases {
                let wheel_acl = base.join("third_party/acl/inc");
                let wheel_hccl = base.join("third_party/hccl/inc");
                if wheel_acl.join("acl/acl.h").is_file() && wheel_hccl.join("hccl/hccl.h").is_file()
                {
                    return Ok(HeaderDirs {
                        acl_inc: wheel_acl,
                        hccl_inc: wheel_hccl,
                        extra: vec![base.clone()],
                    });
                }
                if base.join("acl/acl.h").is_file() && base.join("hccl/hccl.h").is_file() {
                    return Ok(HeaderDirs {
                        acl_inc: base.clone(),
                        hccl_inc: base.clone(),
                        extra: vec![],
                    });
                }
            }
            Err(format!(
                "no CANN headers under {}: expected acl/acl.h and hccl/hccl.h in it, in its include/, \
                 or in torch_npu/include/third_party/{{acl,hccl}}/inc (run `cargo xtask headers`)",
                root.display()
            ))
        }

        fn clang_args(&self) -> Vec<String> {
            let mut args = vec![
                "-x".to_string(),
                "c++".to_string(),
                "-std=c++14".to_string(),
            ];
            for dir in [&self.acl_inc, &self.hccl_inc]
                .into_iter()
                .chain(self.extra.iter())
            {
                args.push(format!("-I{}", dir.display()));
            }
            args.push(format!("-I{}", self.acl_inc.join("acl").display()));
            args
        }

        /// The ACL version the headers declare (`ACL_{MAJOR,MINOR,PATCH}_VERSION`).
        pub fn acl_version(&self) -> Option<String> {
            acl_version(&self.acl_inc)
        }
    }

    /// The ACL version a header set declares, `"1.17.0"`: the
    /// `ACL_{MAJOR,MINOR,PATCH}_VERSION` defines of `acl/acl_rt.h` (since ACL
    /// 1.15), else of `acl/acl.h` (before), under `acl_inc`.
    pub fn acl_version(acl_inc: &Path) -> Option<String> {
        for file in ["acl/acl_rt.h", "acl/acl.h"] {
            let Ok(text) = std::fs::read_to_string(acl_inc.join(file)) else {
                continue;
            };
            let get = |name: &str| {
                text.lines().find_map(|l| {
                    let mut it = l.split_whitespace();
                    (it.next() == Some("#define") && it.next() == Some(name))
                        .then(|| it.next().map(str::to_string))
                        .flatten()
                })
            };
            if let (Some(a), Some(b), Some(c)) = (
                get("ACL_MAJOR_VERSION"),
                get("ACL_MINOR_VERSION"),
                get("ACL_PATCH_VERSION"),
            ) {
                return Some(format!("{a}.{b}.{c}"));
            }
        }
        None
    }

    fn base_builder(dirs: &HeaderDirs) -> bindgen::Builder {
        bindgen::Builder::default()
            .clang_args(dirs.clang_args())
            .generate_comments(false)
            .layout_tests(true)
            .derive_default(true)
            .derive_debug(true)
            .derive_copy(true)
            .prepend_enum_name(false)
            .default_enum_style(bindgen::EnumVariation::Consts)
            .size_t_is_usize(true)
            .use_core()
            .formatter(bindgen::Formatter::None)
            .wrap_unsafe_ops(true)
    }

    /// Runs bindgen over the AscendCL headers; returns bindgen's Rust source.
    pub fn bindgen_acl(dirs: &HeaderDirs) -> Result<String, String> {
        let mut b = base_builder(dirs);
        for h in ACL_HEADERS {
            b = b.header(dirs.acl_inc.join(h).display().to_string());
        }
        let b = b
            .allowlist_file(".*/acl/[^/]*\\.h")
            .allowlist_file(".*/acl/error_codes/[^/]*\\.h");
        b.generate()
            .map(|bnd| bnd.to_string())
            .map_err(|e| format!("bindgen failed on the AscendCL headers: {e}"))
    }

    /// Runs bindgen over the HCCL headers; ACL types come from `acl_sys`.
    pub fn bindgen_hccl(dirs: &HeaderDirs) -> Result<String, String> {
        let mut b = base_builder(dirs);
        for h in HCCL_HEADERS {
            b = b.header(dirs.hccl_inc.join(h).display().to_string());
        }
        let b = b
            .allowlist_file(".*/hccl/[^/]*\\.h")
            .blocklist_file(".*/acl/.*")
            .blocklist_type("acl.*")
            .blocklist_function("HcclCommConfigInit");
        b.generate()
            .map(|bnd| bnd.to_string())
            .map_err(|e| format!("bindgen failed on the HCCL headers: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROV: Provenance<'static> = Provenance {
        headers: "test headers",
        generator: "test",
        command: "test",
        prelude: "use crate::loader::LoadError;",
        library_fn: "crate::library",
    };

    #[test]
    fn functions_become_table_fields_and_wrappers_types_are_kept() {
        let src = r#"
            pub type aclError = ::core::ffi::c_int;
            pub const ACL_X: u32 = 1;
            unsafe extern "C" {
                pub fn aclB(x: i32) -> aclError;
                pub fn aclA(p: *mut u32, n: usize) -> aclError;
            }
        "#;
        let out = generate(&PROV, src).unwrap();
        assert!(out.starts_with("// @generated by test. Do not edit.\n// Headers: test headers\n"));
        assert!(out.contains("pub type aclError = ::core::ffi::c_int;"));
        assert!(out.contains("pub const ACL_X: u32 = 1;"));
        assert!(out.contains("pub const SYMBOLS: [&'static str; 2usize] = [\"aclA\", \"aclB\"];"));
        assert!(
            out.contains("pub aclA: Option<unsafe extern \"C\" fn(*mut u32, usize) -> aclError>,")
        );
        assert!(out.contains("pub unsafe fn aclB(x: i32) -> Result<aclError, LoadError>"));
        assert!(out.contains("None => Err(lib.missing(\"aclB\"))"));
        syn::parse_file(out.split_once("\n\n").unwrap().1).expect("output parses");
    }

    #[test]
    fn wrappers_load_through_the_given_library_function() {
        let src = r#"unsafe extern "C" { pub fn aclnnX(n: i32) -> i32; }"#;
        let out = generate(
            &Provenance {
                library_fn: "crate::aclnn::library",
                ..PROV
            },
            src,
        )
        .unwrap();
        assert!(out.contains("let lib = crate::aclnn::library()?;"), "{out}");
        assert!(
            generate(&PROV, src)
                .unwrap()
                .contains("let lib = crate::library()?;")
        );
    }

    #[test]
    fn variadic_functions_get_a_field_but_no_wrapper() {
        let src = r#"unsafe extern "C" { pub fn aclLog(level: i32, fmt: *const u8, ...); }"#;
        let out = generate(&PROV, src).unwrap();
        assert!(out.contains("pub aclLog: Option<unsafe extern \"C\" fn(i32, *const u8, ...)>,"));
        assert!(!out.contains("pub unsafe fn aclLog"));
    }

    #[test]
    fn mangled_declarations_are_rejected() {
        let src = r#"unsafe extern "C" { #[link_name = "\u{1}_Z3foov"] pub fn foo(); }"#;
        let err = generate(&PROV, src).unwrap_err();
        assert!(err.starts_with("foo has a link_name attribute"), "{err}");
    }

    #[test]
    fn duplicate_declarations_are_merged() {
        let src = r#"unsafe extern "C" { pub fn f(); } unsafe extern "C" { pub fn f(); }"#;
        let (_, functions) = split(src).unwrap();
        assert_eq!(functions.len(), 1);
    }
}

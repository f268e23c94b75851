//! The safe items that wrap each C function, found from the
//! `#[doc(alias = "C name")]` attributes of a crate's sources (also
//! `#[doc(alias("a", "b"))]` and either form inside `#[cfg_attr(…)]`).
//!
//! The crate is read from `src/lib.rs` through its `mod` declarations
//! (`#[cfg(test)]` modules are left out). Each item carrying an alias is
//! named by its shortest public path, re-exports (`pub use`, globs included)
//! taken into account: `acl::Stream::synchronize` for a method of an impl
//! block of `acl::stream::Stream` re-exported at the crate root,
//! `acl::result::malloc` for a free function. An item with no public path
//! (private module, `pub(crate)`) is reported by its module path and marked
//! as not public.
//!
//! Items that a macro invocation defines are found by a heuristic: in the
//! invocation's tokens, the aliases of a run of attributes go to the first
//! identifier after them that is not a keyword (`#[doc(alias = "aclnnMul")]
//! mul => …` names `mul`); such items are taken to be public.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A Rust item that names a C function in a doc alias.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SafeItem {
    /// `crate::module::Type::method`, with the crate's name.
    pub path: String,
    /// Whether users can name it (a public path exists).
    pub public: bool,
}

/// Alias (the C name) → the items carrying it, public first.
pub type Aliases = BTreeMap<String, Vec<SafeItem>>;

/// The aliases of the crate `name` whose sources are in `src` (holding
/// `lib.rs`).
pub fn read_crate(name: &str, src: &Path) -> Result<Aliases, String> {
    let read = |path: &Path| std::fs::read_to_string(path).ok();
    Crate::load(name, src, &read).map(|c| c.aliases())
}

/// One module of the crate.
#[derive(Default)]
struct Module {
    /// Reachable from the crate root through `pub mod` only.
    public: bool,
    /// Names defined here (items and child modules) → whether `pub`.
    defs: BTreeMap<String, bool>,
    /// Child modules.
    children: BTreeSet<String>,
    /// `use` declarations: (name here or `*`, path, whether `pub`).
    uses: Vec<(String, Vec<String>, bool)>,
}

/// Where an alias stands.
struct Site {
    alias: String,
    module: Vec<String>,
    /// The owner's path as written (a type or trait) for a member of an impl
    /// block, a trait or an enum; empty for a free item.
    owner: Vec<String>,
    name: String,
    public: bool,
}

struct Crate {
    name: String,
    modules: BTreeMap<Vec<String>, Module>,
    sites: Vec<Site>,
}

impl Crate {
    fn load(
        name: &str,
        src: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Result<Crate, String> {
        let mut c = Crate {
            name: name.to_string(),
            modules: BTreeMap::new(),
            sites: Vec::new(),
        };
        let lib = src.join("lib.rs");
        let text = read(&lib).ok_or_else(|| format!("cannot read {}", lib.display()))?;
        let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", lib.display()))?;
        c.load_items(&file.items, Vec::new(), true, src, read)?;
        Ok(c)
    }

    /// Reads the items of module `path`; `dir` is where its child modules'
    /// files are.
    fn load_items(
        &mut self,
        items: &[syn::Item],
        path: Vec<String>,
        public: bool,
        dir: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Result<(), String> {
        self.modules.entry(path.clone()).or_default().public = public;
        for item in items {
            self.load_item(item, &path, dir, read)?;
        }
        Ok(())
    }

    fn load_item(
        &mut self,
        item: &syn::Item,
        path: &[String],
        dir: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Result<(), String> {
        use syn::Item;
        let (attrs, name, vis) = match item {
            Item::Mod(m) => {
                if is_cfg_test(&m.attrs) {
                    return Ok(());
                }
                let child = m.ident.to_string();
                let public = self.modules.get(path).is_some_and(|p| p.public) && is_pub(&m.vis);
                let module = self.module_mut(path);
                module.children.insert(child.clone());
                module.defs.insert(child.clone(), is_pub(&m.vis));
                let mut child_path = path.to_vec();
                child_path.push(child.clone());
                self.add_sites(&m.attrs, path, &[], &child, is_pub(&m.vis));
                let child_dir = dir.join(&child);
                return match &m.content {
                    Some((_, items)) => {
                        self.load_items(items, child_path, public, &child_dir, read)
                    }
                    None => {
                        let (file, text) = [
                            dir.join(format!("{child}.rs")),
                            child_dir.join("mod.rs"),
                        ]
                        .into_iter()
                        .find_map(|f| read(&f).map(|t| (f, t)))
                        .ok_or_else(|| {
                            format!(
                                "module {child}: neither {child}.rs nor {child}/mod.rs in {}",
                                dir.display()
                            )
                        })?;
                        let parsed = syn::parse_file(&text)
                            .map_err(|e| format!("{}: {e}", file.display()))?;
                        self.load_items(&parsed.items, child_path, public, &child_dir, read)
                    }
                };
            }
            Item::Use(u) => {
                let mut out = Vec::new();
                flatten_use(&u.tree, Vec::new(), &mut out);
                let public = is_pub(&u.vis);
                self.module_mut(path)
                    .uses
                    .extend(out.into_iter().map(|(name, p)| (name, p, public)));
                return Ok(());
            }
            Item::Impl(i) => {
                let owner = type_path(&i.self_ty);
                let trait_impl = i.trait_.is_some();
                for member in &i.items {
                    match member {
                        syn::ImplItem::Fn(f) => self.add_sites(
                            &f.attrs,
                            path,
                            &owner,
                            &f.sig.ident.to_string(),
                            trait_impl || is_pub(&f.vis),
                        ),
                        syn::ImplItem::Const(k) => self.add_sites(
                            &k.attrs,
                            path,
                            &owner,
                            &k.ident.to_string(),
                            trait_impl || is_pub(&k.vis),
                        ),
                        syn::ImplItem::Macro(m) => {
                            self.add_macro_sites(&m.mac.tokens, path, &owner);
                        }
                        _ => {}
                    }
                }
                return Ok(());
            }
            Item::Macro(m) if m.ident.is_none() => {
                self.add_macro_sites(&m.mac.tokens, path, &[]);
                return Ok(());
            }
            Item::Trait(t) => {
                let owner = vec![t.ident.to_string()];
                for member in &t.items {
                    let (attrs, name) = match member {
                        syn::TraitItem::Fn(f) => (&f.attrs, &f.sig.ident),
                        syn::TraitItem::Const(k) => (&k.attrs, &k.ident),
                        syn::TraitItem::Type(ty) => (&ty.attrs, &ty.ident),
                        _ => continue,
                    };
                    self.add_sites(attrs, path, &owner, &name.to_string(), true);
                }
                (&t.attrs, &t.ident, &t.vis)
            }
            Item::Enum(e) => {
                let owner = vec![e.ident.to_string()];
                for v in &e.variants {
                    self.add_sites(&v.attrs, path, &owner, &v.ident.to_string(), true);
                }
                (&e.attrs, &e.ident, &e.vis)
            }
            Item::Fn(f) => (&f.attrs, &f.sig.ident, &f.vis),
            Item::Struct(s) => (&s.attrs, &s.ident, &s.vis),
            Item::Union(u) => (&u.attrs, &u.ident, &u.vis),
            Item::Type(t) => (&t.attrs, &t.ident, &t.vis),
            Item::Const(k) => (&k.attrs, &k.ident, &k.vis),
            Item::Static(s) => (&s.attrs, &s.ident, &s.vis),
            _ => return Ok(()),
        };
        let name = name.to_string();
        self.module_mut(path).defs.insert(name.clone(), is_pub(vis));
        self.add_sites(attrs, path, &[], &name, is_pub(vis));
        Ok(())
    }

    fn module_mut(&mut self, path: &[String]) -> &mut Module {
        self.modules.entry(path.to_vec()).or_default()
    }

    fn add_sites(
        &mut self,
        attrs: &[syn::Attribute],
        module: &[String],
        owner: &[String],
        name: &str,
        public: bool,
    ) {
        for alias in attr_aliases(attrs) {
            self.sites.push(Site {
                alias,
                module: module.to_vec(),
                owner: owner.to_vec(),
                name: name.to_string(),
                public,
            });
        }
    }

    fn add_macro_sites(
        &mut self,
        tokens: &proc_macro2::TokenStream,
        module: &[String],
        owner: &[String],
    ) {
        for (alias, name) in macro_aliases(tokens) {
            if owner.is_empty() {
                // A free item the invocation defines.
                self.module_mut(module).defs.insert(name.clone(), true);
            }
            self.sites.push(Site {
                alias,
                module: module.to_vec(),
                owner: owner.to_vec(),
                name,
                public: true,
            });
        }
    }

    /// The item `path` names in `module` (a `use` path or a path written in
    /// code): (module, name) of its definition. `None` outside the crate.
    fn resolve(
        &self,
        module: &[String],
        path: &[String],
        depth: u32,
    ) -> Option<(Vec<String>, String)> {
        if depth > 8 {
            return None;
        }
        let (first, rest) = path.split_first()?;
        let mut at: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            _ if rest.is_empty() => return self.lookup(module, first, depth),
            _ => {
                // A child module, or a module brought in by a `use`.
                let mut child = module.to_vec();
                child.push(first.clone());
                if self.modules.contains_key(&child) {
                    child
                } else {
                    let (mut at, name) = self.lookup(module, first, depth + 1)?;
                    at.push(name);
                    at
                }
            }
        };
        let Some((last, middle)) = rest.split_last() else {
            // `self` or `crate` alone: a module.
            let name = at.pop()?;
            return Some((at, name));
        };
        for segment in middle {
            match segment.as_str() {
                "super" => {
                    at.pop();
                }
                "self" => {}
                _ => at.push(segment.clone()),
            }
        }
        self.lookup(&at, last, depth)
    }

    /// `name` as seen in `module`: defined there or brought in by a `use`.
    fn lookup(&self, module: &[String], name: &str, depth: u32) -> Option<(Vec<String>, String)> {
        let m = self.modules.get(module)?;
        if m.defs.contains_key(name) {
            return Some((module.to_vec(), name.to_string()));
        }
        for (used, path, _) in &m.uses {
            if used == name {
                return self.resolve(module, path, depth + 1);
            }
        }
        for (used, path, _) in &m.uses {
            if used == "*"
                && let Some((parent, last)) = self.resolve(module, path, depth + 1)
            {
                let mut target = parent;
                target.push(last);
                if self.modules.contains_key(&target)
                    && let Some(found) = self.lookup(&target, name, depth + 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// The public paths (segments after the crate name) of the item `name`
    /// defined in `module`; the shortest first.
    fn public_paths(&self, module: &[String], name: &str) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let Some(m) = self.modules.get(module) else {
            return out;
        };
        if m.public && m.defs.get(name) == Some(&true) {
            let mut p = module.to_vec();
            p.push(name.to_string());
            out.push(p);
        }
        let target = (module.to_vec(), name.to_string());
        for (at, here) in &self.modules {
            if !here.public {
                continue;
            }
            for (used, path, public) in &here.uses {
                if !public {
                    continue;
                }
                let exported = if used == "*" {
                    let Some((parent, last)) = self.resolve(at, path, 0) else {
                        continue;
                    };
                    let mut glob = parent;
                    glob.push(last);
                    if glob != module || m.defs.get(name) != Some(&true) {
                        continue;
                    }
                    name.to_string()
                } else if self.resolve(at, path, 0).as_ref() == Some(&target) {
                    used.clone()
                } else {
                    continue;
                };
                let mut p = at.clone();
                p.push(exported);
                out.push(p);
            }
        }
        out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        out.dedup();
        out
    }

    /// The path of the item `name` defined in `module`, and whether it is
    /// public.
    fn path_of(&self, module: &[String], name: &str) -> (String, bool) {
        match self.public_paths(module, name).first() {
            Some(p) => (self.join(p), true),
            None => {
                let mut p = module.to_vec();
                p.push(name.to_string());
                (self.join(&p), false)
            }
        }
    }

    fn join(&self, segments: &[String]) -> String {
        std::iter::once(self.name.as_str())
            .chain(segments.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("::")
    }

    /// The definition of a type or trait written as `owner` in `module`:
    /// through the module's names and `use`s, else the one definition of that
    /// name in the crate.
    fn owner(&self, module: &[String], owner: &[String]) -> Option<(Vec<String>, String)> {
        if let Some(found) = self.resolve(module, owner, 0) {
            return Some(found);
        }
        let name = owner.last()?;
        let mut found = self
            .modules
            .iter()
            .filter(|(_, m)| m.defs.contains_key(name) && !m.children.contains(name));
        match (found.next(), found.next()) {
            (Some((at, _)), None) => Some((at.clone(), name.clone())),
            _ => None,
        }
    }

    fn aliases(&self) -> Aliases {
        let mut out: Aliases = BTreeMap::new();
        for site in &self.sites {
            let item = if site.owner.is_empty() {
                let (path, public) = self.path_of(&site.module, &site.name);
                SafeItem {
                    path,
                    public: public && site.public,
                }
            } else {
                let (owner_path, owner_public) = match self.owner(&site.module, &site.owner) {
                    Some((m, n)) => self.path_of(&m, &n),
                    None => (
                        self.join(&[site.module.clone(), site.owner.clone()].concat()),
                        false,
                    ),
                };
                SafeItem {
                    path: format!("{owner_path}::{}", site.name),
                    public: owner_public && site.public,
                }
            };
            let items = out.entry(site.alias.clone()).or_default();
            if !items.contains(&item) {
                items.push(item);
            }
        }
        for items in out.values_mut() {
            items.sort_by(|a, b| b.public.cmp(&a.public).then_with(|| a.path.cmp(&b.path)));
        }
        out
    }
}

fn is_pub(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The path segments of an impl block's self type (`Tensor<T>` → `Tensor`).
fn type_path(ty: &syn::Type) -> Vec<String> {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect(),
        syn::Type::Reference(r) => type_path(&r.elem),
        syn::Type::Paren(p) => type_path(&p.elem),
        syn::Type::Group(g) => type_path(&g.elem),
        _ => Vec::new(),
    }
}

/// The names a `use` tree brings in: (name or `*`, full path).
pub(crate) fn flatten_use(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    out: &mut Vec<(String, Vec<String>)>,
) {
    let with = |s: String| {
        let mut p = prefix.clone();
        p.push(s);
        p
    };
    match tree {
        syn::UseTree::Path(p) => flatten_use(&p.tree, with(p.ident.to_string()), out),
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                if let Some(last) = prefix.last() {
                    out.push((last.clone(), prefix.clone()));
                }
            } else {
                out.push((name.clone(), with(name)));
            }
        }
        syn::UseTree::Rename(r) => {
            if r.rename != "_" {
                out.push((r.rename.to_string(), with(r.ident.to_string())));
            }
        }
        syn::UseTree::Glob(_) => out.push(("*".to_string(), prefix)),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten_use(t, prefix.clone(), out);
            }
        }
    }
}

/// The doc aliases of a list of attributes.
fn attr_aliases(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut out = Vec::new();
    for a in attrs {
        meta_aliases(&a.meta, &mut out);
    }
    out
}

/// `doc(alias = "a")`, `doc(alias("a", "b"))`, `cfg_attr(pred, doc(…), …)`.
fn meta_aliases(meta: &syn::Meta, out: &mut Vec<String>) {
    use syn::punctuated::Punctuated;
    let syn::Meta::List(list) = meta else {
        return;
    };
    if list.path.is_ident("cfg_attr") {
        if let Ok(metas) =
            list.parse_args_with(Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated)
        {
            for m in metas.iter().skip(1) {
                meta_aliases(m, out);
            }
        }
        return;
    }
    if !list.path.is_ident("doc") {
        return;
    }
    let _ = list.parse_nested_meta(|m| {
        if m.path.is_ident("alias") {
            if m.input.peek(syn::Token![=]) {
                out.push(m.value()?.parse::<syn::LitStr>()?.value());
            } else {
                let content;
                syn::parenthesized!(content in m.input);
                let names = Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated(&content)?;
                out.extend(names.iter().map(syn::LitStr::value));
            }
        } else if m.input.peek(syn::Token![=]) {
            let _: syn::Expr = m.value()?.parse()?;
        } else if !m.input.is_empty() && !m.input.peek(syn::Token![,]) {
            let _content;
            syn::parenthesized!(_content in m.input);
        }
        Ok(())
    });
}

/// The (alias, item name) pairs of a macro invocation's tokens (see the
/// module's docs).
fn macro_aliases(tokens: &proc_macro2::TokenStream) -> Vec<(String, String)> {
    use proc_macro2::{Delimiter, TokenTree};
    const SKIP: &[&str] = &[
        "pub", "fn", "unsafe", "const", "async", "extern", "crate", "in", "self", "super", "static",
    ];
    let mut out = Vec::new();
    let mut pending = Vec::new();
    let mut iter = tokens.clone().into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = iter.peek()
                    && g.delimiter() == Delimiter::Bracket
                {
                    if let Ok(meta) = syn::parse2::<syn::Meta>(g.stream()) {
                        meta_aliases(&meta, &mut pending);
                    }
                    iter.next();
                }
            }
            TokenTree::Ident(i) if !pending.is_empty() => {
                let name = i.to_string();
                if !SKIP.contains(&name.as_str()) {
                    out.extend(pending.drain(..).map(|alias| (alias, name.clone())));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn aliases(files: &[(&str, &str)]) -> Aliases {
        let files: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (Path::new("/src").join(p), t.to_string()))
            .collect();
        let read = |p: &Path| files.get(p).cloned();
        Crate::load("acl", Path::new("/src"), &read)
            .unwrap()
            .aliases()
    }

    /// Each alias carries exactly these (path, public) items.
    fn assert_items(a: &Aliases, expected: &[(&str, &[(&str, bool)])]) {
        for (alias, items) in expected {
            let found: Vec<(&str, bool)> = a
                .get(*alias)
                .map(|v| v.iter().map(|i| (i.path.as_str(), i.public)).collect())
                .unwrap_or_default();
            assert_eq!(found, *items, "{alias}");
        }
    }

    #[test]
    fn methods_are_named_by_their_type_at_its_shortest_public_path() {
        let lib = "pub mod stream;\nmod sync;\npub use stream::Stream;\n";
        let stream = r#"
pub struct Stream;
impl Stream {
    #[doc(alias = "aclrtSynchronizeStream")]
    pub fn synchronize(&self) {}
    #[doc(alias = "aclrtStreamQuery")]
    fn query(&self) {}
}
impl Drop for Stream {
    #[doc(alias = "aclrtDestroyStream")]
    fn drop(&mut self) {}
}
"#;
        let sync = r#"
pub(crate) struct Flag;
impl<T> crate::sync::Flag {
    #[doc(alias = "aclrtSetFlag")]
    pub fn set(&self) {}
}
#[cfg(test)]
mod tests {
    #[doc(alias = "aclTest")]
    fn t() {}
}
"#;
        let a = aliases(&[
            ("lib.rs", lib),
            ("stream.rs", stream),
            ("sync/mod.rs", sync),
        ]);
        assert_items(
            &a,
            &[
                (
                    "aclrtSynchronizeStream",
                    &[("acl::Stream::synchronize", true)],
                ),
                ("aclrtStreamQuery", &[("acl::Stream::query", false)]),
                ("aclrtDestroyStream", &[("acl::Stream::drop", true)]),
                ("aclrtSetFlag", &[("acl::sync::Flag::set", false)]),
                ("aclTest", &[]),
            ],
        );
    }

    #[test]
    fn a_function_with_several_aliases_and_an_alias_on_several_items() {
        let lib = "pub mod result;\nmod types;\npub use types::*;\n";
        let result = r#"
#[doc(alias = "aclrtMalloc")]
#[doc(alias("aclrtMallocAlign32", "aclrtMallocCached"))]
#[cfg_attr(docsrs, doc(alias = "aclrtMallocWithCfg"))]
pub fn malloc() {}
"#;
        let types = r#"
pub struct Buffer;
impl Buffer {
    #[doc(alias = "aclrtMalloc")]
    pub fn new() -> Self { Buffer }
}
"#;
        let a = aliases(&[("lib.rs", lib), ("result.rs", result), ("types.rs", types)]);
        let malloc: &[(&str, bool)] = &[("acl::result::malloc", true)];
        assert_items(
            &a,
            &[
                ("aclrtMallocAlign32", malloc),
                ("aclrtMallocCached", malloc),
                ("aclrtMallocWithCfg", malloc),
                (
                    "aclrtMalloc",
                    &[("acl::Buffer::new", true), ("acl::result::malloc", true)],
                ),
            ],
        );
    }

    #[test]
    fn items_a_macro_invocation_defines() {
        let aclnn = r#"
binary! {
    /// `a * b`.
    #[doc(alias = "aclnnMul")]
    mul => aclnnMulGetWorkspaceSize, aclnnMul;
    #[doc(alias = "aclnnDiv")]
    pub fn div(x: u8);
}
"#;
        let a = aliases(&[("lib.rs", "pub mod aclnn;\n"), ("aclnn.rs", aclnn)]);
        assert_items(
            &a,
            &[
                ("aclnnMul", &[("acl::aclnn::mul", true)]),
                ("aclnnDiv", &[("acl::aclnn::div", true)]),
            ],
        );
    }
}

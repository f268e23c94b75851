//! `cargo xtask lint`: the layering rules of the crates that call C
//! (CONTRIBUTING.md, "Layers"), checked on their source text, for every crate
//! with a `result` module (`acl`, `hccl`):
//!
//! - only `result` names the -sys crates (code, not comments: a doc example
//!   is user code);
//! - each function of `result` carries, in `#[doc(alias = "…")]`, exactly the
//!   C functions its body calls (`call!(Name(`, `sys::Name(`, the entries of
//!   `forward! { … }`), and each C function has one wrapper;
//! - a wrapper of one C function is named by the naming rule (the C name
//!   without `aclrt`/`acl`/`Hccl`, in snake case), except the ones listed in
//!   [`NAMING_EXCEPTIONS`] with the reason.
//!
//! One scanner for all crates, so that the rules are the same for each.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The prefixes of the C functions the crates call.
const C_PREFIXES: [&str; 2] = ["Hccl", "acl"];

/// `(crate, wrapper, reason)`: wrappers named otherwise than the rule says.
pub const NAMING_EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "acl",
        "memcpy_2d",
        "aclrtMemcpy2d: `2d` is read as one unit, as in cudarc's `memcpy_2d`",
    ),
    (
        "acl",
        "unsubscribe_report",
        "aclrtUnSubscribeReport: `unsubscribe` is one word (the pair of `subscribe_report`)",
    ),
];

/// A crate checked: its name, its sources, the words that name its -sys crates.
struct Checked {
    name: &'static str,
    src: &'static str,
    sys_words: &'static [&'static str],
}

const CRATES: [Checked; 2] = [
    Checked {
        name: "acl",
        src: "acl/src",
        sys_words: &["acl_sys", "sys::"],
    },
    Checked {
        name: "hccl",
        src: "hccl/src",
        sys_words: &["hccl_sys", "acl_sys", "sys::"],
    },
];

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask lint".to_string());
    }
    let root = crate::workspace_root();
    let mut problems = Vec::new();
    for c in &CRATES {
        let found = check_crate(&root, c)?;
        println!(
            "lint {}: {} wrappers in result, {} problem(s)",
            c.name,
            found.0,
            found.1.len()
        );
        problems.extend(found.1.into_iter().map(|p| format!("{}: {p}", c.name)));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("layering rules broken:\n{}", problems.join("\n")))
    }
}

/// The number of wrappers found and the problems of one crate.
fn check_crate(root: &Path, c: &Checked) -> Result<(usize, Vec<String>), String> {
    let src = root.join(c.src);
    let result_dir = src.join("result");
    let mut problems = Vec::new();
    let files = rust_files(&src)?;
    if files.len() < 10 {
        return Err(format!(
            "only {} files below {}: wrong directory?",
            files.len(),
            src.display()
        ));
    }
    let mut all = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let place = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        if file.starts_with(&result_dir) {
            all.extend(wrappers(&text, &place));
            continue;
        }
        let code = Source::new(&text).code;
        for (i, line) in code.lines().enumerate() {
            if c.sys_words.iter().any(|w| line.contains(w)) {
                problems.push(format!(
                    "{place}:{}: names a -sys crate outside `result`: {}",
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    problems.extend(alias_problems(&all));
    problems.extend(naming_problems(c.name, &all));
    let wrappers = all.iter().filter(|w| !w.calls.is_empty()).count();
    if wrappers < 40 {
        return Err(format!(
            "only {wrappers} wrappers found in {}: is the scan broken?",
            result_dir.display()
        ));
    }
    Ok((wrappers, problems))
}

/// Aliases that are not the calls; C functions wrapped twice.
fn alias_problems(all: &[Wrapper]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for w in all {
        if w.aliases != w.calls {
            problems.push(format!(
                "{} `{}`: aliases {:?}, calls {:?}",
                w.place, w.name, w.aliases, w.calls
            ));
        }
        if let [only] = w.calls.iter().collect::<Vec<_>>()[..]
            && let Some(first) = seen.insert(only.clone(), w.place.clone())
        {
            problems.push(format!(
                "{} `{}`: {only} has a wrapper already ({first})",
                w.place, w.name
            ));
        }
    }
    problems
}

/// Single-call wrappers not named by the rule (nor listed as exceptions).
fn naming_problems(krate: &str, all: &[Wrapper]) -> Vec<String> {
    let mut problems = Vec::new();
    for w in all {
        let [c] = w.calls.iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let want = rust_name(c);
        let excepted = NAMING_EXCEPTIONS
            .iter()
            .any(|&(k, name, _)| k == krate && name == w.name);
        if want != w.name && !excepted {
            problems.push(format!(
                "{}: `{}` calls {c}, so is named `{want}` (or listed in NAMING_EXCEPTIONS with a reason)",
                w.place, w.name
            ));
        }
    }
    problems
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", d.display()))?.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A source text twice, at the same offsets: `code` without comments
/// (doc comments say things like "calls `HcclFoo(`" that are not calls), and
/// `bare`, also without the contents of string and character literals,
/// where structure (braces, `;`, `fn`) and calls are looked for. Aliases are
/// read from `code`, being strings.
struct Source {
    code: String,
    bare: String,
}

impl Source {
    fn new(text: &str) -> Source {
        let b = text.as_bytes();
        let (mut code, mut bare) = (b.to_vec(), b.to_vec());
        let mut i = 0;
        while i < b.len() {
            let start = i;
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    code[start..i].fill(b' ');
                    bare[start..i].fill(b' ');
                    continue;
                }
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    bare[start + 1..i].fill(b' ');
                }
                b'\'' if b.get(i + 2) == Some(&b'\'') => {
                    bare[i + 1] = b' ';
                    i += 2;
                }
                _ => {}
            }
            i += 1;
        }
        // Only ASCII bytes were replaced (by spaces), so both stay UTF-8.
        let text = |v: Vec<u8>| String::from_utf8_lossy(&v).into_owned();
        Source {
            code: text(code),
            bare: text(bare),
        }
    }

    /// Blanks `range` in both texts.
    fn blank(&mut self, range: std::ops::Range<usize>) {
        let spaces = " ".repeat(range.len());
        self.code.replace_range(range.clone(), &spaces);
        self.bare.replace_range(range, &spaces);
    }
}

/// The index just past the brace that closes the one at `open`.
fn matching_brace(bare: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in bare.bytes().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' if depth == 1 => return i + 1,
            b'}' => depth -= 1,
            _ => {}
        }
    }
    // Unbalanced: the rest of the text is the block.
    bare.len()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The identifier starting at `at`.
fn ident_at(text: &str, at: usize) -> &str {
    let len = text[at..].bytes().take_while(|&c| is_ident(c)).count();
    &text[at..at + len]
}

/// Every `alias` of `#[doc(alias = "alias")]` in `text`.
fn aliases(text: &str) -> BTreeSet<String> {
    const KEY: &str = "#[doc(alias = \"";
    text.match_indices(KEY)
        .map(|(at, _)| {
            let rest = &text[at + KEY.len()..];
            rest[..rest.find('"').unwrap_or(rest.len())].to_string()
        })
        .collect()
}

/// The C functions `bare` calls: `Name` of every `call!(Name(` and
/// `sys::Name(` where `Name` has the prefix of an HCCL or AscendCL function
/// (`Hccl`, `acl`); the -sys crates' Rust helpers (`library`,
/// `comm_config_default`) are snake_case.
fn c_calls(bare: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for key in ["call!(", "sys::"] {
        for (at, _) in bare.match_indices(key) {
            let name = ident_at(bare, at + key.len());
            let is_c = C_PREFIXES.iter().any(|p| name.starts_with(p));
            if is_c && bare[at + key.len() + name.len()..].starts_with('(') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The naming rule (CONTRIBUTING.md): the C name without its `aclrt`,
/// `acl` or `Hccl` prefix, in snake_case, a word starting at each capital
/// (a run of capitals is one word).
fn rust_name(c_name: &str) -> String {
    let bare = ["aclrt", "acl", "Hccl"]
        .iter()
        .find_map(|p| c_name.strip_prefix(p))
        .unwrap_or(c_name);
    let s = bare.as_bytes();
    let mut out = String::new();
    for (i, &c) in s.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let after_lower = !s[i - 1].is_ascii_uppercase();
            let ends_acronym = s.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if after_lower || ends_acronym {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase() as char);
    }
    out
}

/// A function of a `result` module: its name, its doc aliases, the C
/// functions its body calls.
#[derive(Debug)]
struct Wrapper {
    place: String,
    name: String,
    aliases: BTreeSet<String>,
    calls: BTreeSet<String>,
}

/// The entries of the `forward! { … }` blocks of `src` (each
/// `#[doc(alias = "A")] name = C(args);`), which are then blanked.
fn forward_entries(src: &mut Source, file: &str) -> Vec<Wrapper> {
    const KEY: &str = "forward! {";
    let mut out = Vec::new();
    while let Some(at) = src.bare.find(KEY) {
        let open = at + KEY.len() - 1;
        let end = matching_brace(&src.bare, open);
        // Each entry ends with `);`.
        let mut start = open + 1;
        while let Some(semi) = src.bare[start..end].find(");") {
            let entry = start..start + semi + 2;
            start = entry.end;
            let bare = &src.bare[entry.clone()];
            let after_attrs = bare.rfind(")]").map_or(0, |i| i + 2);
            let signature = bare[after_attrs..].trim_start();
            let called = signature[signature.find('=').map_or(0, |i| i + 1)..].trim_start();
            out.push(Wrapper {
                place: format!("{file} (forward!)"),
                name: ident_at(signature, 0).to_string(),
                aliases: aliases(&src.code[entry]),
                calls: [ident_at(called, 0).to_string()].into(),
            });
        }
        src.blank(at..end);
    }
    out
}

/// Every `fn` of `src` with a body: its attributes are the text since the
/// end of the previous item (`}` or `;` at the top level), its body is
/// found by brace matching.
fn functions(src: &Source, file: &str) -> Vec<Wrapper> {
    let (code, bare) = (&src.code, &src.bare);
    let b = bare.as_bytes();
    let mut out = Vec::new();
    let mut item_start = 0;
    let mut i = 0;
    while i < b.len() {
        if bare[i..].starts_with("fn ") && (i == 0 || !is_ident(b[i - 1])) {
            let Some(found) = bare[i..].find(['{', ';']) else {
                break;
            };
            let open = i + found;
            if b[open] == b'{' {
                let end = matching_brace(bare, open);
                out.push(Wrapper {
                    place: format!("{file}:{}", code[..i].lines().count()),
                    name: ident_at(bare, i + 3).to_string(),
                    aliases: aliases(&code[item_start..i]),
                    calls: c_calls(&bare[open..end]),
                });
                i = end;
            } else {
                i = open + 1;
            }
            item_start = i;
            continue;
        }
        match b[i] {
            // A block that is not a function body (a macro, a `const`, an
            // `impl`): skipped whole, an item of its own.
            b'{' => i = matching_brace(bare, i) - 1,
            b';' | b'}' => {}
            _ => {
                i += 1;
                continue;
            }
        }
        i += 1;
        item_start = i;
    }
    out
}

/// The wrappers of a file's text.
fn wrappers(text: &str, file: &str) -> Vec<Wrapper> {
    let mut src = Source::new(text);
    let mut all = forward_entries(&mut src, file);
    all.extend(functions(&src, file));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_naming_rule_strips_the_prefix_and_splits_words() {
        assert_eq!(
            rust_name("HcclCommInitRootInfoConfig"),
            "comm_init_root_info_config"
        );
        assert_eq!(rust_name("HcclAlltoAllVC"), "allto_all_vc");
        assert_eq!(rust_name("aclrtGetDeviceCount"), "get_device_count");
        assert_eq!(rust_name("aclmdlLoadFromFile"), "mdl_load_from_file");
        assert_eq!(rust_name("aclCreateTensorDesc"), "create_tensor_desc");
    }

    /// `cann-sim` is a plain rlib (its file name hashed, so builds with other
    /// features do not overwrite it); the shared library is its own crate.
    #[test]
    fn the_simulator_is_an_rlib_and_its_shared_library_a_crate_of_its_own() {
        let root = crate::workspace_root();
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
        let sim: toml::Value = toml::from_str(&read("cann-sim/Cargo.toml")).unwrap();
        assert!(sim["lib"].get("crate-type").is_none(), "{:?}", sim["lib"]);
        let so: toml::Value = toml::from_str(&read("cann-sim-cdylib/Cargo.toml")).unwrap();
        assert_eq!(so["lib"]["name"].as_str(), Some("cann_sim"));
        assert_eq!(so["lib"]["crate-type"].as_array().unwrap().len(), 1);
        assert_eq!(so["lib"]["crate-type"][0].as_str(), Some("cdylib"));
    }

    /// `cargo test --workspace` checks the rules too, not only CI's step.
    #[test]
    fn the_workspace_crates_follow_the_layering_rules() {
        let root = crate::workspace_root();
        for c in &CRATES {
            let (wrappers, problems) = check_crate(&root, c).unwrap();
            assert!(wrappers >= 40, "{}: {wrappers}", c.name);
            assert!(problems.is_empty(), "{}:\n{}", c.name, problems.join("\n"));
        }
    }

    #[test]
    fn a_wrong_alias_a_second_wrapper_and_a_wrong_name_are_reported() {
        let text = "#[doc(alias = \"aclrtMalloc\")]\npub fn malloc() {\n    unsafe { call!(aclrtFree(p)) }\n}\n\
                    #[doc(alias = \"aclrtFree\")]\npub fn release() {\n    unsafe { call!(aclrtFree(p)) }\n}\n";
        let all = wrappers(text, "t");
        let aliases = alias_problems(&all);
        assert_eq!(aliases.len(), 2, "{aliases:?}");
        assert!(
            aliases[0].contains("aliases {\"aclrtMalloc\"}, calls {\"aclrtFree\"}"),
            "{aliases:?}"
        );
        assert!(
            aliases[1].contains("aclrtFree has a wrapper already"),
            "{aliases:?}"
        );
        let names = naming_problems("acl", &all);
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(
            names[0].contains("`malloc` calls aclrtFree, so is named `free`"),
            "{names:?}"
        );
    }

    /// The scanner itself, on a known text.
    #[test]
    fn the_scanner_finds_aliases_calls_and_forwarded_entries() {
        let text = r#"
    /// Calls `HcclNotThis(` in a comment.
    #[doc(alias = "HcclA")]
    #[allow(
        clippy::x,
        reason = "a; b }"
    )]
    pub unsafe fn a(x: u32) -> Result<()> {
        let s = "sys::HcclInString(";
        unsafe { call!(HcclA(x)) }
    }
    const _: () = { let y = 1; };
    /// No alias, no call.
    fn helper() -> u32 {
        let _brace = '{';
        if true { 1 } else { 2 }
    }
    #[doc(alias = "HcclB")]
    pub fn b() -> Result<u32> {
        let _ = sys::comm_config_default();
        Ok(unsafe { sys::HcclB() }?)
    }
    forward! {
        /// Doc.
        #[doc(alias = "HcclC")]
        c = HcclC(comm: sys::HcclComm);
        #[doc(alias = "HcclWrong")]
        d = HcclD(p: *mut c_void, n: u64);
    }
    "#;
        let got: Vec<_> = wrappers(text, "t")
            .into_iter()
            .map(|w| (w.name, w.aliases, w.calls))
            .collect();
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            got,
            vec![
                ("c".into(), set(&["HcclC"]), set(&["HcclC"])),
                ("d".into(), set(&["HcclWrong"]), set(&["HcclD"])),
                ("a".into(), set(&["HcclA"]), set(&["HcclA"])),
                ("helper".into(), set(&[]), set(&[])),
                ("b".into(), set(&["HcclB"]), set(&["HcclB"])),
            ]
        );
    }
}

//! The crate's layers, checked on its source text: `hccl::result` is the
//! only module that names the -sys crates, and each of its functions is
//! aliased, in the docs, to exactly the C functions it calls, under the name
//! the naming rule gives.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn only_the_result_module_names_the_sys_crates() {
    let result_dir = src().join("result");
    let mut offenders = Vec::new();
    let mut read = 0;
    for file in rust_files(&src()) {
        if file.starts_with(&result_dir) {
            continue;
        }
        read += 1;
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if ["hccl_sys", "acl_sys", "sys::"]
                .iter()
                .any(|word| line.contains(word))
            {
                offenders.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        read >= 10,
        "only {read} files read below {}",
        src().display()
    );
    assert!(
        offenders.is_empty(),
        "C calls and types go through hccl::result (and result::raw):\n{}",
        offenders.join("\n")
    );
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
        let text = |v: Vec<u8>| String::from_utf8(v).unwrap();
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
    panic!("unbalanced braces from byte {open}");
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
            rest[..rest.find('"').unwrap()].to_string()
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
            let is_c = name.starts_with("Hccl") || name.starts_with("acl");
            if is_c && bare[at + key.len() + name.len()..].starts_with('(') {
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// The naming rule: the C name without its `Hccl` prefix, in snake_case,
/// a word starting at each capital (a run of capitals is one word).
fn rust_name(c_name: &str) -> String {
    let s = c_name.strip_prefix("Hccl").unwrap_or(c_name).as_bytes();
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

/// A function of `hccl::result`: its name, its doc aliases, the C
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
            let called = signature[signature.find('=').unwrap() + 1..].trim_start();
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
            let open = i + bare[i..].find(['{', ';']).unwrap();
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

fn result_wrappers() -> Vec<Wrapper> {
    let mut all = Vec::new();
    for file in rust_files(&src().join("result")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let place = file.strip_prefix(src()).unwrap().display().to_string();
        all.extend(wrappers(&text, &place));
    }
    all
}

#[test]
fn every_result_function_is_aliased_to_exactly_the_c_functions_it_calls() {
    let all = result_wrappers();
    let mut wrong = Vec::new();
    let mut wrappers = 0;
    let mut called = BTreeSet::new();
    for w in &all {
        if w.aliases != w.calls {
            wrong.push(format!(
                "{} `{}`: aliases {:?}, calls {:?}",
                w.place, w.name, w.aliases, w.calls
            ));
        }
        if !w.calls.is_empty() {
            wrappers += 1;
        }
        called.extend(w.calls.iter().cloned());
    }
    assert!(
        wrong.is_empty(),
        "each function's doc aliases must be the C functions it calls:\n{}",
        wrong.join("\n")
    );
    // Every C function of the crate's safe layer, wrapped once.
    assert_eq!(wrappers, called.len(), "{all:#?}");
    assert!(wrappers >= 40, "only {wrappers} wrappers found: {all:#?}");
}

#[test]
fn result_functions_are_named_by_the_naming_rule() {
    assert_eq!(
        rust_name("HcclCommInitRootInfoConfig"),
        "comm_init_root_info_config"
    );
    assert_eq!(rust_name("HcclAlltoAllVC"), "allto_all_vc");
    assert_eq!(rust_name("HcclGetRootInfo"), "get_root_info");
    let mut wrong = Vec::new();
    for w in result_wrappers() {
        if let Some(c) = w.calls.first()
            && w.calls.len() == 1
            && rust_name(c) != w.name
        {
            wrong.push(format!(
                "{}: `{}` calls {c}, so is named `{}`",
                w.place,
                w.name,
                rust_name(c)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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

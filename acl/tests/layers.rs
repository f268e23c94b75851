//! The crate's layering, checked on its source: `acl::result` is the only
//! module that names `acl_sys`, and each of its functions names, in its
//! `#[doc(alias)]`es, exactly the C functions it calls.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a line: without a `//` comment (doc comments included: their
/// examples are user code, which may use `acl_sys`).
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

#[test]
fn only_the_result_module_names_acl_sys() {
    let result_dir = src().join("result");
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(&result_dir)) {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let c = code(line);
            if c.contains("acl_sys") || c.contains("sys::") {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "C is reached through acl::result only (its `raw` module re-exports types); found:\n{}",
        found.join("\n")
    );
}

/// Each `fn` of a file: (name, doc aliases, body).
fn functions(text: &str) -> Vec<(String, BTreeSet<String>, String)> {
    let mut out = Vec::new();
    let mut aliases = BTreeSet::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(rest) = line.strip_prefix("#[doc(alias = \"") {
            aliases.insert(rest.split('"').next().unwrap().to_string());
        } else if let Some(pos) = line.find("fn ")
            && !line.starts_with("//")
            && (line.starts_with("pub") || line.starts_with("fn") || line.starts_with("unsafe"))
        {
            let name: String = line[pos + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // The body: from the first `{` to its matching `}`.
            let mut depth = 0i32;
            let mut body = String::new();
            let mut started = false;
            'outer: for l in &lines[i..] {
                for ch in code(l).chars() {
                    match ch {
                        '{' => {
                            depth += 1;
                            started = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                    body.push(ch);
                    if started && depth == 0 {
                        break 'outer;
                    }
                }
                body.push('\n');
                i += 1;
            }
            out.push((name, std::mem::take(&mut aliases), body));
        } else if !line.starts_with("//") && (line.ends_with('}') || line.ends_with(';')) {
            // The end of another item: its aliases were not a function's.
            aliases.clear();
        }
        i += 1;
    }
    out
}

/// The C functions a body calls: `call!(name(` and `sys::name(`.
fn calls(body: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for marker in ["call!(", "sys::"] {
        let mut rest = body;
        while let Some(p) = rest.find(marker) {
            rest = &rest[p + marker.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if rest[name.len()..].trim_start().starts_with('(') && name.starts_with("acl") {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn every_result_function_names_the_c_functions_it_calls_in_its_doc_aliases() {
    let mut files = Vec::new();
    rust_files(&src().join("result"), &mut files);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (name, aliases, body) in functions(&text) {
            let called = calls(&body);
            if called.is_empty() && aliases.is_empty() {
                continue; // a helper
            }
            checked += 1;
            if aliases != called {
                wrong.push(format!(
                    "{}: fn {name}: aliases {aliases:?}, calls {called:?}",
                    f.display()
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} wrappers found: is the scan broken?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_scan_finds_a_wrong_alias() {
    let text = "/// Doc.\n#[doc(alias = \"aclrtMalloc\")]\npub fn malloc() -> Result<()> {\n    \
                unsafe { call!(aclrtFree(p)) }\n}\n";
    let fns = functions(text);
    assert_eq!(fns.len(), 1);
    assert_eq!(fns[0].0, "malloc");
    assert_eq!(fns[0].1, BTreeSet::from(["aclrtMalloc".to_string()]));
    assert_eq!(calls(&fns[0].2), BTreeSet::from(["aclrtFree".to_string()]));
}

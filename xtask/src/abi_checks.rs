//! The behavioural checks of `cargo xtask abi-check`, read from
//! `xtask/abi/checks/*.cpp`.
//!
//! Each check covers one C function that cann-sim implements and is written
//! in C++ as
//!
//! ```text
//! ABI_CHECK(aclrtMalloc) {
//!     EXPECT_RC(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
//!     …
//! }
//! ```
//!
//! the block ending at the first line that is `}` alone. Between checks only
//! blank lines and `//` comments may stand. `abi.rs` turns each check into a
//! function of the generated program (with `#line` directives, so that the
//! compiler and failed expectations name the check file's lines) and runs it
//! on a new thread. The files, the helpers the bodies may use and the rules
//! a check follows are described in `xtask/abi/README.md`.

/// One behavioural check.
#[derive(Debug, PartialEq)]
pub struct Check {
    /// The C function it covers.
    pub function: &'static str,
    /// Its C++ statements: the lines between `ABI_CHECK(…) {` and `}`.
    pub body: &'static str,
    /// The file it stands in, relative to the workspace root.
    pub file: &'static str,
    /// The line of the file where `body` starts (1-based).
    pub line: usize,
}

/// The check files, in the order their groups run. Each area has its own
/// file, so that people working on different parts of the simulator add
/// checks without touching the same one.
const FILES: [(&str, &str); 11] = [
    (
        "xtask/abi/checks/runtime.cpp",
        include_str!("../abi/checks/runtime.cpp"),
    ),
    (
        "xtask/abi/checks/hccl.cpp",
        include_str!("../abi/checks/hccl.cpp"),
    ),
    (
        "xtask/abi/checks/op.cpp",
        include_str!("../abi/checks/op.cpp"),
    ),
    (
        "xtask/abi/checks/model.cpp",
        include_str!("../abi/checks/model.cpp"),
    ),
    (
        "xtask/abi/checks/vmm.cpp",
        include_str!("../abi/checks/vmm.cpp"),
    ),
    (
        "xtask/abi/checks/prof.cpp",
        include_str!("../abi/checks/prof.cpp"),
    ),
    (
        "xtask/abi/checks/modelbuild.cpp",
        include_str!("../abi/checks/modelbuild.cpp"),
    ),
    (
        "xtask/abi/checks/tdt.cpp",
        include_str!("../abi/checks/tdt.cpp"),
    ),
    (
        "xtask/abi/checks/modelcond.cpp",
        include_str!("../abi/checks/modelcond.cpp"),
    ),
    (
        "xtask/abi/checks/ritask.cpp",
        include_str!("../abi/checks/ritask.cpp"),
    ),
    (
        "xtask/abi/checks/profrange.cpp",
        include_str!("../abi/checks/profrange.cpp"),
    ),
];

/// Every check of every file, in running order.
pub fn all() -> Result<Vec<Check>, String> {
    let mut out = Vec::new();
    for (file, text) in FILES {
        out.extend(parse(file, text)?);
    }
    Ok(out)
}

/// The checks of one file.
fn parse(file: &'static str, text: &'static str) -> Result<Vec<Check>, String> {
    let mut out = Vec::new();
    // The open check: its function, first body line and byte offset.
    let mut open: Option<(&'static str, usize, usize)> = None;
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let number = i + 1;
        match open {
            Some((function, first, start)) if line == "}" => {
                let body = text[start..offset].trim_end_matches(['\n', '\r']);
                out.push(Check {
                    function,
                    body,
                    file,
                    line: first,
                });
                open = None;
            }
            Some(_) => {}
            None if line.trim().is_empty() || line.starts_with("//") => {}
            None => {
                let function = line
                    .strip_prefix("ABI_CHECK(")
                    .and_then(|rest| rest.strip_suffix(") {"))
                    .filter(|name| is_identifier(name))
                    .ok_or_else(|| {
                        format!(
                            "{file}:{number}: expected `ABI_CHECK(function) {{`, a `//` comment \
                             or a blank line, found `{line}`"
                        )
                    })?;
                open = Some((function, number + 1, offset + raw.len()));
            }
        }
        offset += raw.len();
    }
    if let Some((function, first, _)) = open {
        return Err(format!(
            "{file}:{}: the check of {function} has no closing `}}` alone on a line",
            first - 1
        ));
    }
    Ok(out)
}

fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_are_read_with_their_lines() {
        let text = "// intro\n\nABI_CHECK(aclA) {\n    int x = 0;\n    if (x) {\n    }\n}\n\n// ---- b ----\nABI_CHECK(aclB) {\n}\n";
        let checks = parse("f.cpp", text).unwrap();
        assert_eq!(
            checks,
            vec![
                Check {
                    function: "aclA",
                    body: "    int x = 0;\n    if (x) {\n    }",
                    file: "f.cpp",
                    line: 4,
                },
                Check {
                    function: "aclB",
                    body: "",
                    file: "f.cpp",
                    line: 11,
                },
            ]
        );
    }

    #[test]
    fn stray_code_and_unclosed_checks_are_errors() {
        let stray = parse("f.cpp", "int x;\n").unwrap_err();
        assert!(stray.starts_with("f.cpp:1: expected `ABI_CHECK"), "{stray}");
        let unclosed = parse("f.cpp", "\nABI_CHECK(aclA) {\n    x;\n").unwrap_err();
        assert!(
            unclosed.starts_with("f.cpp:2: the check of aclA"),
            "{unclosed}"
        );
        assert!(parse("f.cpp", "ABI_CHECK(1a) {\n}\n").is_err());
    }

    #[test]
    fn the_checked_in_files_parse() {
        let checks = all().unwrap();
        assert!(checks.len() > 100);
        assert_eq!(checks[0].function, "aclInit");
    }
}

//! Compiles one C file into a shared library, for a build script: cann-sim's
//! (the sample kernels) and, through `#[path]`, those of `tests` (the fake
//! AscendCL) and `examples` (the custom kernel).
//!
//! In a sanitizer build (`RUSTFLAGS=-Zsanitizer=address` or `thread`, which
//! cargo shows build scripts as `CARGO_CFG_SANITIZE`) the C code is
//! instrumented for the same sanitizer but not linked with the C compiler's
//! runtime: its calls into the runtime resolve, when the library is loaded,
//! against the one rustc linked into the executable (`cargo xtask sanitize`
//! exports it). A second runtime in the process — gcc's `libasan.so`, which
//! `-fsanitize=address` at link time adds — aborts it ("ASan runtime does not
//! come first in initial library list").

use std::path::Path;
use std::process::Command;

/// Compiles `source` at `-O<opt>` into the shared library `lib` (its object
/// file goes next to it). The error says which step failed and why.
pub fn build(source: &str, lib: &Path, opt: u32) -> Result<(), String> {
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .try_get_compiler()
        .map_err(|e| e.to_string())?;
    // cc itself adds -fsanitize=address for an ASan build; the thread
    // sanitizer it leaves to the build script.
    let sanitizers = std::env::var("CARGO_CFG_SANITIZE").unwrap_or_default();
    let instrument = sanitizers
        .split(',')
        .filter(|s| ["address", "thread"].contains(s))
        .map(|s| format!("-fsanitize={s}"));
    let object = lib.with_extension("o");
    let mut compile = compiler.to_command();
    compile
        .args(["-c", "-fPIC", &format!("-O{opt}")])
        .args(instrument)
        .arg("-o")
        .arg(&object)
        .arg(source);
    run(compile, "compiling")?;
    let mut link = compiler.to_command();
    // -fno-sanitize=all: no runtime of the C compiler's own.
    link.args(["-shared", "-fno-sanitize=all", "-o"])
        .arg(lib)
        .arg(&object);
    run(link, "linking")
}

fn run(mut command: Command, step: &str) -> Result<(), String> {
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("{step} failed ({status}): {command:?}")),
        Err(e) => Err(format!("cannot run the C compiler ({step}): {e}")),
    }
}

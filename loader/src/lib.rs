//! The run-time loader of the CANN -sys crates (`cann-acl-sys`, `hccl-sys`,
//! `dcmi-sys`).
//!
//! No CANN library is linked at build time. Each -sys crate owns a generated
//! struct (`Api`) with one `Option<unsafe extern "C" fn(..)>` field per C
//! function; this crate finds a library, opens it and fills those fields
//! symbol by symbol. A symbol the library lacks stays `None`, and only a call
//! through that field fails (older CANN releases lack newer functions).
//! [`define_library!`] gives a -sys crate its process-wide library
//! (`library()`, `install()`, `open()`) in one line.
//!
//! # Where a library comes from
//!
//! Sources are tried in this order; the first that yields a library wins:
//!
//! 1. **A table installed in code**, e.g. by `cann_sim::install()`. Nothing is
//!    searched on disk.
//! 2. **An explicit file** named by the library's own environment variable
//!    ([`LibrarySpec::env_var`]: `CANN_ACL_LIB`, `CANN_HCCL_LIB`,
//!    `CANN_DCMI_LIB`, ...). When the variable is set, nothing else is tried:
//!    a file that does not open is an error, never a silent fallback.
//! 3. **CANN install directories**: `$ASCEND_HOME_PATH`, `$ASCEND_TOOLKIT_HOME`
//!    and `/usr/local/Ascend/ascend-toolkit/latest`, each with the library's
//!    sub-directories (`lib64`, `runtime/lib64`, ...), then the library's
//!    fixed directories (the driver directories for DCMI).
//! 4. **The plain soname** through the system loader (`LD_LIBRARY_PATH`,
//!    `ldconfig`'s cache).
//!
//! A library whose functions are spread over several files (aclnn's
//! operator packages) has [`Companions`]: at step 3 (when its variable is not
//! set) each function is looked up per symbol across those files and its
//! own, in their order ([`libraries::OPAPI_COMPANIONS`]).
//!
//! When nothing is found, [`LoadError::LibraryNotFound`] lists every path that
//! was tried, why each failed, and the variable to set. [`libraries`] holds
//! the search specification of each CANN library.
//!
//! # Older CANN releases
//!
//! A -sys crate may give its library a [`Compat`]: what it knows about the
//! release that added each function, or changed its signature. A call to a
//! function the loaded library lacks then fails with
//! [`LoadError::NeedsNewer`] when the release that added it is known ("aclXxx
//! needs ACL ≥ 1.12 (CANN 8.1.RC1); the loaded AscendCL is ACL 1.2.0"), else
//! with [`LoadError::MissingSymbol`]. A function whose signature changed is
//! not resolved from a library whose version predates the current signature,
//! so it is never called with the wrong arguments: the call fails with
//! [`LoadError::NeedsNewer`] too.
//!
//! # Example
//!
//! ```
//! use cann_loader::{Candidate, libraries};
//!
//! // Where AscendCL would be searched, given only ASCEND_HOME_PATH.
//! let env = |name: &str| (name == "ASCEND_HOME_PATH").then(|| "/opt/cann".into());
//! let first = &libraries::ASCENDCL.candidates(&env)[0];
//! assert_eq!(first, &Candidate::File("/opt/cann/lib64/libascendcl.so".into()));
//! ```

pub mod libraries;

use std::ffi::{CStr, OsString, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Environment variables naming CANN install roots, in the order they are searched.
pub const ROOT_ENV_VARS: [&str; 2] = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"];

/// The default CANN toolkit root, searched after the environment's roots.
pub const DEFAULT_TOOLKIT_ROOT: &str = "/usr/local/Ascend/ascend-toolkit/latest";

/// Where to look for one C library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibrarySpec {
    /// A human name for messages, e.g. `"AscendCL"`.
    pub name: &'static str,
    /// The file name the system loader knows, e.g. `"libascendcl.so"`.
    pub soname: &'static str,
    /// The environment variable that names the library file explicitly.
    pub env_var: &'static str,
    /// Sub-directories of each CANN root that may hold the library.
    pub root_subdirs: &'static [&'static str],
    /// Absolute directories searched after the CANN roots (e.g. driver directories).
    pub fixed_dirs: &'static [&'static str],
}

/// Which of the loader's sources provided a library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A table installed in code; the string names its provider (e.g. `"cann-sim"`).
    Installed(&'static str),
    /// The file named by the library's environment variable.
    EnvVar {
        /// The variable that named it.
        var: &'static str,
        /// The file it named.
        path: PathBuf,
    },
    /// A file found in a CANN install or fixed directory.
    SearchPath(PathBuf),
    /// The plain soname, resolved by the system loader.
    Soname(&'static str),
    /// A file opened explicitly by the program (`Library::open`).
    Explicit(PathBuf),
    /// Several files whose functions are looked up per symbol, in this
    /// order (a library with [`Companions`], when more than one was found).
    Group(Vec<Source>),
}

impl Source {
    /// The file path of the library, when it came from a file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::EnvVar { path, .. } | Source::SearchPath(path) | Source::Explicit(path) => {
                Some(path)
            }
            Source::Group(members) => members.iter().find_map(Source::path),
            Source::Installed(_) | Source::Soname(_) => None,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Installed(who) => write!(f, "table installed in code by {who}"),
            Source::EnvVar { var, path } => write!(f, "{} (from ${var})", path.display()),
            Source::SearchPath(path) => write!(f, "{}", path.display()),
            Source::Soname(name) => write!(f, "{name} (via the system loader)"),
            Source::Explicit(path) => write!(f, "{}", path.display()),
            Source::Group(members) => {
                write!(f, "{} files, searched per symbol in order: ", members.len())?;
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{m}")?;
                }
                Ok(())
            }
        }
    }
}

/// One place the loader tried, and why it did not work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The path or soname tried.
    pub tried: String,
    /// Why it was not used.
    pub reason: String,
}

/// Errors of the loader: a library that cannot be found or opened, or a
/// function the opened library does not export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No source yielded the library.
    #[error("{}", not_found_message(.library, .env_var, .attempts))]
    LibraryNotFound {
        /// Human name of the library.
        library: &'static str,
        /// The variable to set to name the file explicitly.
        env_var: &'static str,
        /// Every path tried, in order, with the reason it failed.
        attempts: Vec<Attempt>,
    },
    /// The library was loaded, but does not export this function.
    #[error(
        "{symbol} is not available: the loaded {library} ({origin}, version {version}) does not export it; \
         a newer CANN release may be needed"
    )]
    MissingSymbol {
        /// The C function name.
        symbol: &'static str,
        /// Human name of the library.
        library: &'static str,
        /// Where the library came from.
        origin: String,
        /// The library's version, or `"unknown"`.
        version: String,
    },
    /// The loaded library lacks this function, or declares it with another
    /// signature, and the compatibility table knows the first CANN release
    /// with the function as the bindings declare it.
    #[error(
        "{symbol} needs {needs}; the loaded {library} is {version} ({origin}): install that CANN \
         release or a newer one, or do without {symbol}"
    )]
    NeedsNewer {
        /// The C function name.
        symbol: &'static str,
        /// What it needs, e.g. `"ACL ≥ 1.12 (CANN 8.1.RC1)"`, with the reason
        /// when the library exports the symbol with an older signature.
        needs: String,
        /// Human name of the library.
        library: &'static str,
        /// Where the library came from.
        origin: String,
        /// The library's version, or `"unknown"`.
        version: String,
    },
    /// A table was installed after the library had already been loaded from elsewhere.
    #[error(
        "cannot install {provider} as {library}: {library} was already loaded from {loaded}; \
         install the table before the first call"
    )]
    AlreadyLoaded {
        /// Human name of the library.
        library: &'static str,
        /// Who tried to install a table.
        provider: &'static str,
        /// Where the library had been loaded from.
        loaded: String,
    },
}

fn not_found_message(library: &str, env_var: &str, attempts: &[Attempt]) -> String {
    let mut msg = format!(
        "{library} library not found. Set {env_var} to the library file, or ASCEND_HOME_PATH to a \
         CANN install (source set_env.sh), or use the simulator (cann_sim::install()). Tried:"
    );
    for a in attempts {
        msg.push_str(&format!("\n  - {}: {}", a.tried, a.reason));
    }
    msg
}

/// Reads environment variables; a seam so that search order can be tested
/// without touching the process environment.
pub trait Env {
    /// The value of `name`, if set and non-empty.
    fn var(&self, name: &str) -> Option<OsString>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name).filter(|v| !v.is_empty())
    }
}

impl<F: Fn(&str) -> Option<OsString>> Env for F {
    fn var(&self, name: &str) -> Option<OsString> {
        self(name).filter(|v| !v.is_empty())
    }
}

/// The CANN install roots in search order: those of [`ROOT_ENV_VARS`] that
/// are set, then [`DEFAULT_TOOLKIT_ROOT`].
pub fn install_roots(env: &dyn Env) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ROOT_ENV_VARS
        .iter()
        .filter_map(|v| env.var(v))
        .map(PathBuf::from)
        .collect();
    roots.push(PathBuf::from(DEFAULT_TOOLKIT_ROOT));
    roots
}

/// A place the loader will try, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// A file named by the library's environment variable (tried alone).
    EnvVar(PathBuf),
    /// A file in an install or fixed directory.
    File(PathBuf),
    /// The soname through the system loader.
    Soname(&'static str),
}

/// The other files a library's functions are looked up in, per symbol, for
/// a library whose functions are spread over several files (aclnn's
/// operator packages: [`libraries::OPAPI_COMPANIONS`]).
///
/// When the library's variable ([`LibrarySpec::env_var`]) is set, its file
/// alone is the library, as for any other. Otherwise the loader opens, in
/// this order, the files [`before`](Self::before) lists, the library's own
/// file (found by its [`LibrarySpec`] search), and each library of
/// [`after`](Self::after) (found the same way, by its soname); each symbol
/// comes from the first of them that exports it. Files that are missing or
/// do not open are skipped; the library is not found only when none opens.
#[derive(Debug, Clone, Copy)]
pub struct Companions {
    /// Files searched before the library's own file, first first (given
    /// the environment; it lists only files that exist).
    pub before: fn(&dyn Env) -> Vec<PathBuf>,
    /// Sonames of libraries searched after the library's own file, each in
    /// the library's install sub-directories and then by the system loader.
    pub after: &'static [&'static str],
}

impl LibrarySpec {
    /// The disk candidates for this library, in search order (sources 2–4).
    ///
    /// When the library's variable is set it is the only candidate.
    pub fn candidates(&self, env: &dyn Env) -> Vec<Candidate> {
        if let Some(file) = env.var(self.env_var) {
            return vec![Candidate::EnvVar(PathBuf::from(file))];
        }
        let roots = install_roots(env);
        let mut out: Vec<Candidate> = Vec::new();
        let mut push = |p: PathBuf| {
            let c = Candidate::File(p);
            if !out.contains(&c) {
                out.push(c);
            }
        };
        for root in &roots {
            for sub in self.root_subdirs {
                push(root.join(sub).join(self.soname));
            }
        }
        for dir in self.fixed_dirs {
            push(Path::new(dir).join(self.soname));
        }
        out.push(Candidate::Soname(self.soname));
        out
    }

    /// Opens the first candidate that loads (sources 2–4).
    ///
    /// # Errors
    ///
    /// [`LoadError::LibraryNotFound`] listing every candidate and why it failed.
    pub fn open(&self, env: &dyn Env) -> Result<(libloading::Library, Source), LoadError> {
        let mut attempts = Vec::new();
        for cand in self.candidates(env) {
            match cand {
                Candidate::EnvVar(path) => {
                    return match open_file(&path) {
                        Ok(lib) => Ok((
                            lib,
                            Source::EnvVar {
                                var: self.env_var,
                                path,
                            },
                        )),
                        Err(reason) => {
                            attempts.push(Attempt {
                                tried: format!("{} (from ${})", path.display(), self.env_var),
                                reason,
                            });
                            Err(self.not_found(attempts))
                        }
                    };
                }
                Candidate::File(path) => {
                    if !path.exists() {
                        attempts.push(Attempt {
                            tried: path.display().to_string(),
                            reason: "no such file".into(),
                        });
                        continue;
                    }
                    match open_file(&path) {
                        Ok(lib) => return Ok((lib, Source::SearchPath(path))),
                        Err(reason) => attempts.push(Attempt {
                            tried: path.display().to_string(),
                            reason,
                        }),
                    }
                }
                Candidate::Soname(name) => match open_file(Path::new(name)) {
                    Ok(lib) => return Ok((lib, Source::Soname(name))),
                    Err(reason) => attempts.push(Attempt {
                        tried: format!("{name} (system loader)"),
                        reason,
                    }),
                },
            }
        }
        Err(self.not_found(attempts))
    }

    fn not_found(&self, attempts: Vec<Attempt>) -> LoadError {
        LoadError::LibraryNotFound {
            library: self.name,
            env_var: self.env_var,
            attempts,
        }
    }
}

fn open_file(path: &Path) -> Result<libloading::Library, String> {
    // A path (not a bare soname for the system loader) must name a regular
    // file: the dynamic loader opens and reads what it is given, so a FIFO
    // would block it forever. `metadata` follows symbolic links and does
    // not open the file.
    if path.components().count() > 1
        && let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "a FIFO, socket or device"
        };
        return Err(format!(
            "not a regular file ({kind}): give the path of the shared library"
        ));
    }
    // SAFETY: loading a shared library runs its initialisers. The libraries
    // this loader opens are CANN runtime libraries (or the cann-sim cdylib),
    // whose initialisers are designed to run in any host process; the path is
    // chosen by the user or the documented search order.
    unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())
}

/// Resolves each symbol of `lib` as a raw address (null when absent).
///
/// The returned closure is what the generated `Api::from_resolver` takes.
pub fn resolver(lib: &libloading::Library) -> impl FnMut(&CStr) -> *mut c_void + '_ {
    move |name: &CStr| {
        // SAFETY: we only take the symbol's address as an untyped pointer; it is
        // converted to a typed function pointer by the generated code, whose
        // types come from the library's own headers.
        match unsafe { lib.get::<*mut c_void>(name.to_bytes_with_nul()) } {
            Ok(sym) => *sym,
            Err(_) => std::ptr::null_mut(),
        }
    }
}

/// Resolves each symbol from the first of `libs` that exports it (null when
/// none does).
fn group_resolver(libs: &[libloading::Library]) -> impl FnMut(&CStr) -> *mut c_void + '_ {
    let mut each: Vec<_> = libs.iter().map(resolver).collect();
    move |name: &CStr| {
        each.iter_mut()
            .map(|r| r(name))
            .find(|p| !p.is_null())
            .unwrap_or(std::ptr::null_mut())
    }
}

/// What a -sys crate knows about the CANN releases of its library's
/// functions: which release added a function, and which functions changed
/// signature (and since when). The loader consults it to explain a missing
/// function ([`LoadError::NeedsNewer`]) and, while loading a library, to leave
/// out a function the library declares with an older signature than the
/// bindings'.
///
/// Requirements are phrased for messages, e.g. `"ACL ≥ 1.12 (CANN 8.1.RC1)"`.
///
/// # Examples
///
/// ```
/// use cann_loader::{Compat, Library, LoadError, libraries};
///
/// /// `fooNew` came with release 2 of a made-up library.
/// struct Releases;
/// impl Compat for Releases {
///     fn added(&self, symbol: &str) -> Option<String> {
///         (symbol == "fooNew").then(|| "release 2".to_string())
///     }
///     fn signature_changed(&self, _symbol: &str) -> bool {
///         false
///     }
///     fn refuses(&self, _symbol: &str, _version: &str) -> Option<String> {
///         None
///     }
/// }
///
/// let lib = Library::installed(&libraries::HCCL, (), "doc", |_, _| Some("1".into()), Some(&Releases));
/// assert!(matches!(lib.missing("fooNew"), LoadError::NeedsNewer { .. }));
/// assert!(matches!(lib.missing("fooOld"), LoadError::MissingSymbol { .. }));
/// ```
pub trait Compat: Sync {
    /// The release that added `symbol`, as a requirement, when it came after
    /// the oldest release the table covers; `None` for a function of every
    /// release, or one the table does not know.
    fn added(&self, symbol: &str) -> Option<String>;

    /// Does the bindings' signature of `symbol` date from a later release
    /// than its first? Only then can [`refuses`](Compat::refuses) hold, and
    /// only a library that exports such a function has its version probed
    /// while it loads.
    fn signature_changed(&self, symbol: &str) -> bool;

    /// When a library of `version` declares `symbol` with a signature older
    /// than the bindings': the release of the bindings' signature, as a
    /// requirement. The loader then leaves `symbol` out of the table.
    fn refuses(&self, symbol: &str, version: &str) -> Option<String>;
}

/// Builds a library's table `A` from a resolver that gives each C function's
/// address by name, null when absent: the generated `Api::from_resolver`.
pub type Build<A> = unsafe fn(&mut dyn FnMut(&CStr) -> *mut c_void) -> A;

/// Reads a library's version from its table and where it came from, for
/// messages (`"ACL 1.17.0"`); `None` when it cannot tell.
pub type VersionProbe<A> = fn(&A, &Source) -> Option<String>;

/// A loaded library: its function table, where it came from, and (for a
/// library opened from a file) the handle that keeps it mapped.
pub struct Library<A: 'static> {
    /// The function table.
    pub api: A,
    name: &'static str,
    source: Source,
    version: OnceLock<String>,
    version_probe: VersionProbe<A>,
    compat: Option<&'static dyn Compat>,
    _handles: Vec<libloading::Library>,
}

impl<A> fmt::Debug for Library<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("name", &self.name)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl<A> Library<A> {
    /// A library whose table was built in code (e.g. by the simulator).
    pub fn installed(
        spec: &LibrarySpec,
        api: A,
        provider: &'static str,
        version_probe: VersionProbe<A>,
        compat: Option<&'static dyn Compat>,
    ) -> Self {
        Library {
            api,
            name: spec.name,
            source: Source::Installed(provider),
            version: OnceLock::new(),
            version_probe,
            compat,
            _handles: Vec::new(),
        }
    }

    /// Opens the library file at `path` and resolves its symbols with `build`.
    ///
    /// # Errors
    ///
    /// [`LoadError::LibraryNotFound`] when the file cannot be opened.
    ///
    /// # Safety
    ///
    /// `build` must only give typed meaning to symbols whose C signature
    /// matches (the generated `Api::from_resolver` does).
    pub unsafe fn open(
        spec: &LibrarySpec,
        path: &Path,
        build: Build<A>,
        version_probe: VersionProbe<A>,
        compat: Option<&'static dyn Compat>,
    ) -> Result<Self, LoadError> {
        let handle = open_file(path).map_err(|reason| LoadError::LibraryNotFound {
            library: spec.name,
            env_var: spec.env_var,
            attempts: vec![Attempt {
                tried: path.display().to_string(),
                reason,
            }],
        })?;
        Self::from_handles(
            spec,
            vec![handle],
            Source::Explicit(path.to_path_buf()),
            build,
            version_probe,
            compat,
        )
    }

    /// Builds the table from `handles`, each symbol from the first that
    /// exports it (see [`build_gated`]).
    ///
    /// # Errors
    ///
    /// [`LoadError::LibraryNotFound`] when the files export none of the
    /// library's functions: they are some other library, not an older
    /// release of this one.
    fn from_handles(
        spec: &LibrarySpec,
        handles: Vec<libloading::Library>,
        source: Source,
        build: Build<A>,
        version_probe: VersionProbe<A>,
        compat: Option<&'static dyn Compat>,
    ) -> Result<Self, LoadError> {
        // SAFETY: `build` is the generated resolver for this library's
        // headers (contract of `Library::open` and `Slot::new`).
        let (api, probed, resolved) =
            unsafe { build_gated(&handles, &source, build, version_probe, compat) };
        if resolved == 0 {
            return Err(LoadError::LibraryNotFound {
                library: spec.name,
                env_var: spec.env_var,
                attempts: vec![Attempt {
                    tried: source.to_string(),
                    reason: format!(
                        "opened, but it exports none of the {} functions: it is not {} (check \
                         the path)",
                        spec.name, spec.name
                    ),
                }],
            });
        }
        let version = OnceLock::new();
        if let Some(v) = probed {
            let _ = version.set(v);
        }
        Ok(Library {
            api,
            name: spec.name,
            source,
            version,
            version_probe,
            compat,
            _handles: handles,
        })
    }

    /// Where the library came from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The human name of the library (`"AscendCL"`, `"HCCL"`, `"DCMI"`).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The library's version, or `"unknown"`; computed once, on first use.
    pub fn version(&self) -> &str {
        self.version.get_or_init(|| {
            (self.version_probe)(&self.api, &self.source).unwrap_or_else(|| "unknown".to_string())
        })
    }

    /// The error for a call to `symbol`, which this library lacks (or
    /// declares with a signature older than the bindings').
    #[cold]
    pub fn missing(&self, symbol: &'static str) -> LoadError {
        let version = self.version().to_string();
        let needs = self
            .compat
            .and_then(|compat| match compat.refuses(symbol, &version) {
                Some(release) => Some(format!(
                    "{release} (its signature changed there; the loaded library declares it \
                     differently, so it is not called)"
                )),
                None => compat.added(symbol),
            });
        match needs {
            Some(needs) => LoadError::NeedsNewer {
                symbol,
                needs,
                library: self.name,
                origin: self.source.to_string(),
                version,
            },
            None => LoadError::MissingSymbol {
                symbol,
                library: self.name,
                origin: self.source.to_string(),
                version,
            },
        }
    }
}

/// Builds a table from `handles` (each symbol from the first that exports
/// it), leaving out the functions whose signature
/// in the library's release is older than the bindings' (the library's
/// version is probed only when it exports one of the functions whose
/// signature changed). Returns the table, the probed version and how many
/// functions the library exports.
///
/// # Safety
///
/// As [`Slot::new`]: `build` gives typed meaning only to symbols whose C
/// signature matches.
unsafe fn build_gated<A>(
    handles: &[libloading::Library],
    source: &Source,
    build: Build<A>,
    version_probe: VersionProbe<A>,
    compat: Option<&'static dyn Compat>,
) -> (A, Option<String>, usize) {
    let mut changed: Vec<String> = Vec::new();
    let mut resolved = 0usize;
    let mut inner = group_resolver(handles);
    let mut first = |name: &CStr| {
        let p = inner(name);
        if !p.is_null() {
            resolved += 1;
            if let (Some(compat), Ok(n)) = (compat, name.to_str())
                && compat.signature_changed(n)
            {
                changed.push(n.to_string());
            }
        }
        p
    };
    // SAFETY: forwarded to the caller's contract on `build`.
    let api = unsafe { build(&mut first) };
    let Some(compat) = compat.filter(|_| !changed.is_empty()) else {
        return (api, None, resolved);
    };
    let version = version_probe(&api, source);
    let Some(v) = version.as_deref() else {
        return (api, version, resolved);
    };
    if !changed.iter().any(|n| compat.refuses(n, v).is_some()) {
        return (api, version, resolved);
    }
    let mut inner = group_resolver(handles);
    let mut gated = |name: &CStr| match name.to_str() {
        Ok(n) if compat.signature_changed(n) && compat.refuses(n, v).is_some() => {
            std::ptr::null_mut()
        }
        _ => inner(name),
    };
    // SAFETY: as above; leaving a symbol out is always sound.
    let api = unsafe { build(&mut gated) };
    (api, version, resolved)
}

/// The process-wide library of one -sys crate: loaded on first use, or
/// installed in code before that.
pub struct Slot<A: 'static> {
    spec: &'static LibrarySpec,
    cell: OnceLock<Library<A>>,
    lock: std::sync::Mutex<()>,
    build: Build<A>,
    version_probe: VersionProbe<A>,
    compat: Option<&'static dyn Compat>,
    companions: Option<&'static Companions>,
}

impl<A> fmt::Debug for Slot<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("library", &self.spec.name)
            .field("loaded", &self.cell.get().map(|l| l.source()))
            .finish()
    }
}

impl<A: Send + Sync> Slot<A> {
    /// A slot for `spec`, whose table `build` fills from a resolver, whose
    /// version `version_probe` reads, and whose functions `compat` dates
    /// (`None`: no release knowledge; a missing function is
    /// [`LoadError::MissingSymbol`]).
    ///
    /// # Safety
    ///
    /// `build` must only give typed meaning to symbols whose C signature matches.
    pub const unsafe fn new(
        spec: &'static LibrarySpec,
        build: Build<A>,
        version_probe: VersionProbe<A>,
        compat: Option<&'static dyn Compat>,
    ) -> Self {
        // SAFETY: the caller's contract on `build`.
        unsafe { Slot::with_companions(spec, build, version_probe, compat, None) }
    }

    /// As [`new`](Self::new), for a library whose functions are also looked
    /// up, per symbol, in the files `companions` names.
    ///
    /// # Safety
    ///
    /// `build` must only give typed meaning to symbols whose C signature
    /// matches, in every file of the group.
    pub const unsafe fn with_companions(
        spec: &'static LibrarySpec,
        build: Build<A>,
        version_probe: VersionProbe<A>,
        compat: Option<&'static dyn Compat>,
        companions: Option<&'static Companions>,
    ) -> Self {
        Slot {
            spec,
            cell: OnceLock::new(),
            lock: std::sync::Mutex::new(()),
            build,
            version_probe,
            compat,
            companions,
        }
    }

    /// The search specification of this library.
    pub fn spec(&self) -> &'static LibrarySpec {
        self.spec
    }

    /// The library, if it has been loaded or installed.
    pub fn loaded(&self) -> Option<&Library<A>> {
        self.cell.get()
    }

    /// The library: the installed table, or the first library found on disk.
    /// A failure is not remembered: a later call searches again.
    ///
    /// # Errors
    ///
    /// [`LoadError::LibraryNotFound`] listing what was tried.
    #[inline]
    pub fn get(&self) -> Result<&Library<A>, LoadError> {
        match self.cell.get() {
            Some(lib) => Ok(lib),
            None => self.load_slow(&ProcessEnv),
        }
    }

    #[cold]
    fn load_slow(&self, env: &dyn Env) -> Result<&Library<A>, LoadError> {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lib) = self.cell.get() {
            return Ok(lib);
        }
        let (handles, source) = match self.companions {
            Some(companions) if env.var(self.spec.env_var).is_none() => {
                self.open_group(companions, env)?
            }
            _ => {
                let (handle, source) = self.spec.open(env)?;
                (vec![handle], source)
            }
        };
        let lib = Library::from_handles(
            self.spec,
            handles,
            source,
            self.build,
            self.version_probe,
            self.compat,
        )?;
        Ok(self.cell.get_or_init(|| lib))
    }

    /// Opens every file of the library's group that is there, in order
    /// (see [`Companions`]).
    fn open_group(
        &self,
        companions: &Companions,
        env: &dyn Env,
    ) -> Result<(Vec<libloading::Library>, Source), LoadError> {
        let mut handles = Vec::new();
        let mut members = Vec::new();
        let mut attempts = Vec::new();
        for path in (companions.before)(env) {
            match open_file(&path) {
                Ok(lib) => {
                    handles.push(lib);
                    members.push(Source::SearchPath(path));
                }
                Err(reason) => attempts.push(Attempt {
                    tried: path.display().to_string(),
                    reason,
                }),
            }
        }
        let own = std::iter::once(*self.spec);
        let after = companions.after.iter().map(|soname| LibrarySpec {
            soname,
            ..*self.spec
        });
        for spec in own.chain(after) {
            match spec.open(env) {
                Ok((lib, source)) => {
                    handles.push(lib);
                    members.push(source);
                }
                Err(LoadError::LibraryNotFound { attempts: a, .. }) => attempts.extend(a),
                Err(other) => return Err(other),
            }
        }
        match members.len() {
            0 => Err(self.spec.not_found(attempts)),
            1 => Ok((handles, members.remove(0))),
            _ => Ok((handles, Source::Group(members))),
        }
    }

    /// Installs a table built in code (source 1 of the search order).
    ///
    /// Installing the same provider twice is allowed and keeps the first table.
    ///
    /// # Errors
    ///
    /// [`LoadError::AlreadyLoaded`] when the library was already loaded from
    /// another source.
    ///
    /// # Safety
    ///
    /// Every function pointer in `api` must implement the C ABI contract of
    /// the function it is filed under: the signature the headers declare and
    /// the behaviour the library documents (which pointers it reads or
    /// writes, and how far; which handles it creates or frees). Safe crates
    /// built on this slot call the table trusting that contract, so a
    /// pointer that breaks it makes their safe code unsound. A `None`
    /// entry is always sound: calls to it fail with
    /// [`LoadError::MissingSymbol`].
    ///
    /// # Examples
    ///
    /// ```
    /// use cann_loader::{Slot, libraries};
    /// // SAFETY: the table type `()` gives no meaning to any symbol.
    /// static SLOT: Slot<()> =
    ///     unsafe { Slot::new(&libraries::ASCENDCL, |_| (), |_, _| None, None) };
    /// // SAFETY: `()` holds no function pointer that could break a contract.
    /// let lib = unsafe { SLOT.install((), "doc-example") }.unwrap();
    /// assert_eq!(lib.name(), "AscendCL");
    /// ```
    ///
    /// Without `unsafe`, the call does not compile (error E0133):
    ///
    /// ```compile_fail,E0133
    /// use cann_loader::{Slot, libraries};
    /// // SAFETY: the table type `()` gives no meaning to any symbol.
    /// static SLOT: Slot<()> =
    ///     unsafe { Slot::new(&libraries::ASCENDCL, |_| (), |_, _| None, None) };
    /// let lib = SLOT.install((), "doc-example").unwrap();
    /// ```
    pub unsafe fn install(&self, api: A, provider: &'static str) -> Result<&Library<A>, LoadError> {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lib) = self.cell.get() {
            return match lib.source() {
                Source::Installed(p) if *p == provider => Ok(lib),
                other => Err(LoadError::AlreadyLoaded {
                    library: self.spec.name,
                    provider,
                    loaded: other.to_string(),
                }),
            };
        }
        let lib = Library::installed(self.spec, api, provider, self.version_probe, self.compat);
        Ok(self.cell.get_or_init(|| lib))
    }
}

/// Reads the CANN toolkit version from the install-info files next to a
/// library (`<root>/version.cfg`, `<root>/*install.info`), walking up from the
/// library's directory. Used for libraries that have no version function.
pub fn toolkit_version_near(path: &Path) -> Option<String> {
    let mut dir = path.parent();
    for _ in 0..4 {
        let d = dir?;
        for name in ["ascend_toolkit_install.info", "version.info", "version.cfg"] {
            if let Ok(text) = std::fs::read_to_string(d.join(name)) {
                for line in text.lines() {
                    let line = line.trim();
                    for key in ["version=", "Version=", "runtime_running_version="] {
                        if let Some(v) = line.strip_prefix(key) {
                            let v = v.trim_matches(|c| c == '"' || c == '[' || c == ']');
                            if !v.is_empty() {
                                return Some(v.split(':').next().unwrap_or(v).to_string());
                            }
                        }
                    }
                }
            }
        }
        dir = d.parent();
    }
    None
}

/// Defines a -sys crate's process-wide library: `library()`, `install()` and
/// `open()` over a [`Slot`] of the crate's generated `Api`. Used by all three
/// -sys crates so that they share one loader design.
///
/// `define_library!(SPEC, version_probe, "Name")`, with `SPEC` a
/// [`LibrarySpec`] and `version_probe` a `fn(&Api, &Source) -> Option<String>`;
/// a fourth argument, a `&'static dyn` [`Compat`], dates the library's
/// functions for the errors of missing ones; `companions: &C` instead, with
/// `C` a [`Companions`], looks the functions up per symbol across the files
/// it names too.
#[macro_export]
macro_rules! define_library {
    ($spec:expr, $probe:expr, $name:literal) => {
        $crate::define_library!(@slot $spec, $probe, $name, ::core::option::Option::None, ::core::option::Option::None);
    };
    ($spec:expr, $probe:expr, $name:literal, companions: $companions:expr) => {
        $crate::define_library!(@slot $spec, $probe, $name, ::core::option::Option::None, ::core::option::Option::Some($companions));
    };
    ($spec:expr, $probe:expr, $name:literal, $compat:expr) => {
        $crate::define_library!(@slot $spec, $probe, $name, ::core::option::Option::Some($compat), ::core::option::Option::None);
    };
    (@slot $spec:expr, $probe:expr, $name:literal, $compat:expr, $companions:expr) => {
        // SAFETY: `Api::from_resolver` types each symbol by its declaration.
        static LIBRARY: $crate::Slot<Api> = unsafe {
            $crate::Slot::with_companions(&$spec, Api::from_resolver, $probe, $compat, $companions)
        };

        #[doc = concat!("The process-wide ", $name, ": the installed table, or the library found on")]
        /// disk by the search order (on first use). A failure is not remembered.
        ///
        /// # Errors
        ///
        /// [`LoadError::LibraryNotFound`]($crate::LoadError) listing every path
        /// tried and the variable to set.
        pub fn library() -> Result<&'static $crate::Library<Api>, $crate::LoadError> {
            LIBRARY.get()
        }

        #[doc = concat!("Installs a table built in code as the process-wide ", $name, ".")]
        /// Must happen before the first call; installing the same provider
        /// again is a no-op that keeps the first table.
        ///
        /// # Errors
        ///
        /// `LoadError::AlreadyLoaded` when the library was already loaded from elsewhere.
        ///
        /// # Safety
        ///
        /// Every function pointer in `api` must implement the C ABI contract
        /// of the function it is filed under: the signature the headers
        /// declare and the behaviour the library documents (which pointers
        /// it reads or writes, and how far; which handles it creates or
        /// frees). The safe crates call the process-wide table trusting that
        /// contract, so a pointer that breaks it makes their safe code
        /// unsound. `None` entries are always sound (calls to them fail
        /// with `LoadError::MissingSymbol`).
        ///
        /// # Examples
        ///
        /// An empty table (every entry `None`) is sound to install:
        ///
        #[doc = concat!("```\nlet api = ", module_path!(), "::Api::empty();")]
        #[doc = concat!("// SAFETY: an empty table has no function pointer that could break a contract.")]
        #[doc = concat!("let _ = unsafe { ", module_path!(), "::install(api, \"doc-example\") };\n```")]
        ///
        /// Without `unsafe`, the call does not compile (error E0133):
        ///
        #[doc = concat!("```compile_fail,E0133\nlet api = ", module_path!(), "::Api::empty();")]
        #[doc = concat!("let _ = ", module_path!(), "::install(api, \"doc-example\");\n```")]
        pub unsafe fn install(
            api: Api,
            provider: &'static str,
        ) -> Result<&'static $crate::Library<Api>, $crate::LoadError> {
            // SAFETY: the caller's contract is the slot's.
            unsafe { LIBRARY.install(api, provider) }
        }

        #[doc = concat!("Opens a specific ", $name, " file, independent of the process-wide library.")]
        ///
        /// # Errors
        ///
        /// `LoadError::LibraryNotFound` when the file cannot be opened.
        ///
        /// # Safety
        ///
        /// The file's exported symbols must have the signatures these bindings declare.
        pub unsafe fn open(
            path: &::std::path::Path,
        ) -> Result<$crate::Library<Api>, $crate::LoadError> {
            // SAFETY: forwarded to the caller.
            unsafe { $crate::Library::open(&$spec, path, Api::from_resolver, $probe, $compat) }
        }
    };
}

#[cfg(test)]
mod group_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const SPEC: LibrarySpec = LibrarySpec {
        name: "TestLib",
        soname: "libcann_loader_test_does_not_exist.so",
        env_var: "CANN_TEST_LIB",
        root_subdirs: &["lib64", "runtime/lib64"],
        fixed_dirs: &["/opt/fixed"],
    };

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k: &str| map.get(k).map(OsString::from)
    }

    #[test]
    fn env_var_is_the_only_candidate_when_set() {
        let e = env(&[("CANN_TEST_LIB", "/x/lib.so"), ("ASCEND_HOME_PATH", "/a")]);
        assert_eq!(
            SPEC.candidates(&e),
            vec![Candidate::EnvVar("/x/lib.so".into())]
        );
    }

    #[test]
    fn roots_then_fixed_dirs_then_soname_in_order() {
        let e = env(&[("ASCEND_HOME_PATH", "/a"), ("ASCEND_TOOLKIT_HOME", "/b")]);
        let got = SPEC.candidates(&e);
        let want = vec![
            Candidate::File("/a/lib64/libcann_loader_test_does_not_exist.so".into()),
            Candidate::File("/a/runtime/lib64/libcann_loader_test_does_not_exist.so".into()),
            Candidate::File("/b/lib64/libcann_loader_test_does_not_exist.so".into()),
            Candidate::File("/b/runtime/lib64/libcann_loader_test_does_not_exist.so".into()),
            Candidate::File(
                "/usr/local/Ascend/ascend-toolkit/latest/lib64/libcann_loader_test_does_not_exist.so"
                    .into(),
            ),
            Candidate::File(
                "/usr/local/Ascend/ascend-toolkit/latest/runtime/lib64/libcann_loader_test_does_not_exist.so"
                    .into(),
            ),
            Candidate::File("/opt/fixed/libcann_loader_test_does_not_exist.so".into()),
            Candidate::Soname("libcann_loader_test_does_not_exist.so"),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn duplicate_roots_are_searched_once() {
        let e = env(&[("ASCEND_HOME_PATH", "/a"), ("ASCEND_TOOLKIT_HOME", "/a")]);
        let got = SPEC.candidates(&e);
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn missing_library_error_lists_every_path_and_the_variable() {
        let e = env(&[("ASCEND_HOME_PATH", "/nonexistent-root")]);
        let err = SPEC.open(&e).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("TestLib library not found. Set CANN_TEST_LIB"));
        for c in SPEC.candidates(&e) {
            let p = match c {
                Candidate::File(p) => p.display().to_string(),
                Candidate::Soname(s) => s.to_string(),
                Candidate::EnvVar(p) => p.display().to_string(),
            };
            assert!(msg.contains(&p), "{p} missing from: {msg}");
        }
        match err {
            LoadError::LibraryNotFound { attempts, .. } => {
                assert_eq!(attempts.len(), SPEC.candidates(&e).len())
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn env_var_naming_a_bad_file_is_an_error_without_fallback() {
        let e = env(&[("CANN_TEST_LIB", "/nonexistent/libfoo.so")]);
        match SPEC.open(&e).unwrap_err() {
            LoadError::LibraryNotFound {
                env_var, attempts, ..
            } => {
                assert_eq!(env_var, "CANN_TEST_LIB");
                assert_eq!(attempts.len(), 1);
                assert!(attempts[0].tried.contains("/nonexistent/libfoo.so"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn missing_symbol_error_names_symbol_library_and_version() {
        let lib = Library::installed(&SPEC, (), "test", |_, _| Some("1.17.0".into()), None);
        let msg = lib.missing("aclFoo").to_string();
        assert_eq!(
            msg,
            "aclFoo is not available: the loaded TestLib (table installed in code by test, version 1.17.0) \
             does not export it; a newer CANN release may be needed"
        );
    }

    /// A made-up release table: `fooNew` came with release 3; `fooChanged`
    /// has its current signature since release 2.
    struct Releases;

    impl Compat for Releases {
        fn added(&self, symbol: &str) -> Option<String> {
            (symbol == "fooNew").then(|| "TestLib ≥ 3".to_string())
        }
        fn signature_changed(&self, symbol: &str) -> bool {
            symbol == "fooChanged"
        }
        fn refuses(&self, symbol: &str, version: &str) -> Option<String> {
            (self.signature_changed(symbol) && version < "2").then(|| "TestLib ≥ 2".to_string())
        }
    }

    #[test]
    fn a_function_added_later_names_the_release_that_declares_it() {
        let lib = Library::installed(&SPEC, (), "test", |_, _| Some("1".into()), Some(&Releases));
        let err = lib.missing("fooNew");
        assert!(matches!(err, LoadError::NeedsNewer { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "fooNew needs TestLib ≥ 3; the loaded TestLib is 1 (table installed in code by test): \
             install that CANN release or a newer one, or do without fooNew"
        );
        // A function the table does not date: the plain message.
        assert!(matches!(
            lib.missing("fooOld"),
            LoadError::MissingSymbol { .. }
        ));
    }

    #[test]
    fn a_changed_signature_names_the_release_of_the_current_one() {
        let old = Library::installed(&SPEC, (), "test", |_, _| Some("1".into()), Some(&Releases));
        assert_eq!(
            old.missing("fooChanged").to_string(),
            "fooChanged needs TestLib ≥ 2 (its signature changed there; the loaded library \
             declares it differently, so it is not called); the loaded TestLib is 1 (table \
             installed in code by test): install that CANN release or a newer one, or do without \
             fooChanged"
        );
        let new = Library::installed(&SPEC, (), "test", |_, _| Some("2".into()), Some(&Releases));
        assert!(matches!(
            new.missing("fooChanged"),
            LoadError::MissingSymbol { .. }
        ));
    }

    #[test]
    fn without_a_release_table_every_missing_function_is_missing_symbol() {
        let lib = Library::installed(&SPEC, (), "test", |_, _| Some("1".into()), None);
        for name in ["fooNew", "fooChanged", "fooOld"] {
            assert!(matches!(lib.missing(name), LoadError::MissingSymbol { .. }));
        }
    }

    #[test]
    fn toolkit_version_is_read_from_install_info() {
        let dir = tempfile::Builder::new()
            .prefix("cann-loader-ver-")
            .tempdir()
            .unwrap();
        let lib = dir.path().join("lib64");
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(
            dir.path().join("ascend_toolkit_install.info"),
            "package_name=Ascend-cann-toolkit\nversion=8.0.RC2\n",
        )
        .unwrap();
        assert_eq!(
            toolkit_version_near(&lib.join("libhccl.so")).as_deref(),
            Some("8.0.RC2")
        );
    }
}

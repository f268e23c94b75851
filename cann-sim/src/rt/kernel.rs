//! Kernel binaries and kernel launches: a binary is a `dlopen`ed host
//! shared library, its kernels exported C functions, called once per block
//! on the stream's worker as an operator task (the calling convention and
//! the codes are the exports' documentation: `acl::kernel_binary`,
//! `acl::kernel_launch`).

use super::Stream;
use super::error::{Error, ErrorKind};
use super::handles::Table;
use super::stream::{Expect, TaskKind, TaskRange};
use crate::check::Use;
use crate::state::{self, Region};
use std::ffi::{CStr, CString, c_void};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

fn invalid(msg: String) -> Error {
    Error::new(ErrorKind::ParamInvalid, msg)
}

/// A loaded kernel binary: a `dlopen`ed host library.
pub(crate) struct Binary {
    /// The `dlopen` handle (closed when the last reference goes).
    lib: usize,
    /// Where it came from, for messages.
    pub origin: String,
    /// The device it was loaded onto.
    pub device: u32,
    /// Cleared by `aclrtBinaryUnLoad`: its functions may no longer be used.
    pub loaded: AtomicBool,
}

impl Drop for Binary {
    fn drop(&mut self) {
        // SAFETY: `lib` came from a successful `dlopen` and is closed once,
        // here; queued launches hold an `Arc<Binary>`, so no kernel of it
        // runs any more.
        unsafe { libc::dlclose(self.lib as *mut c_void) };
    }
}

/// A kernel of a loaded binary.
pub(crate) struct Function {
    /// Its binary (kept loaded while the function or a launch of it lives).
    pub binary: Arc<Binary>,
    /// The kernel's name.
    pub name: String,
    /// The exported symbol's address.
    pub entry: usize,
}

/// Live binaries.
pub(crate) static BINARIES: Table<Binary> = Table::new(Default::default);
/// Live functions.
pub(crate) static FUNCTIONS: Table<Function> = Table::new(Default::default);

fn dlerror() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the
    // next dl* call on this thread; it is copied at once.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        // SAFETY: non-null and NUL-terminated, as above.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

fn open(path: &Path, origin: &str) -> Result<usize, Error> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| invalid(format!("{origin}: the path contains a NUL byte")))?;
    // SAFETY: `c` is a NUL-terminated path. Loading runs the library's
    // initialisers: the caller vouches for the binary, as on a device.
    let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        return Err(invalid(format!(
            "{origin} is not a loadable kernel binary: {}. cann-sim's kernel binaries are host \
             shared libraries (see the cann-sim README)",
            dlerror()
        )));
    }
    Ok(lib as usize)
}

fn register(lib: usize, origin: String, device: u32) -> usize {
    let b = Arc::new(Binary {
        lib,
        origin,
        device,
        loaded: AtomicBool::new(true),
    });
    BINARIES.lock().insert(b)
}

/// Loads the kernel binary file at `path` onto `device`; returns its handle.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] for a file that cannot be read, is not an
/// ELF file, or cannot be loaded.
pub(crate) fn load_file(path: &str, device: u32) -> Result<usize, Error> {
    let head = std::fs::File::open(path)
        .and_then(|mut f| {
            let mut head = [0u8; 4];
            let n = std::io::Read::read(&mut f, &mut head)?;
            Ok(head[..n].to_vec())
        })
        .map_err(|e| invalid(format!("cannot read the binary file {path:?}: {e}")))?;
    if head.as_slice() != ELF_MAGIC {
        return Err(invalid(format!(
            "{path:?} is not a kernel binary (no ELF header); cann-sim's kernel binaries are host \
             shared libraries (see the cann-sim README)"
        )));
    }
    let lib = open(Path::new(path), &format!("{path:?}"))?;
    Ok(register(lib, path.to_string(), device))
}

/// Loads a kernel binary from its bytes onto `device`; returns its handle.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] for bytes that are not an ELF file or cannot
/// be loaded.
pub(crate) fn load_data(bytes: &[u8], device: u32) -> Result<usize, Error> {
    let length = bytes.len();
    if !bytes.starts_with(ELF_MAGIC) {
        return Err(invalid(format!(
            "the {length} bytes are not a kernel binary (no ELF header); cann-sim's kernel \
             binaries are host shared libraries (see the cann-sim README)"
        )));
    }
    // dlopen needs a file: write the bytes to a private temporary one.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let tmp = std::env::temp_dir().join(format!(
        "cann-sim-kernel-{}-{}.so",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)
        .map_err(|e| invalid(format!("cannot stage the binary in {}: {e}", tmp.display())))?;
    let origin = format!("the {length}-byte binary in memory");
    let lib = open(&tmp, &origin);
    let _ = std::fs::remove_file(&tmp);
    Ok(register(lib?, origin, device))
}

/// Unloads binary `b` (handle `h`): its functions go too. Launches already
/// queued keep the library loaded until they have run.
pub(crate) fn unload(b: &Arc<Binary>, h: usize) {
    b.loaded.store(false, Ordering::Release);
    BINARIES.lock().remove(h);
    let mut functions = FUNCTIONS.lock();
    for f in functions.all() {
        if Arc::ptr_eq(&f.binary, b) {
            functions.remove(Arc::as_ptr(&f) as usize);
        }
    }
}

/// The kernel `name` of binary `b`: the handle of the function already
/// looked up, or of a new one.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] when the binary has no such kernel.
pub(crate) fn function(b: Arc<Binary>, name: &CStr) -> Result<usize, Error> {
    let shown = name.to_string_lossy().into_owned();
    // Reuse the handle of a function already looked up.
    {
        let functions = FUNCTIONS.lock();
        if let Some(f) = functions
            .all()
            .into_iter()
            .find(|f| Arc::ptr_eq(&f.binary, &b) && f.name == shown)
        {
            return Ok(Arc::as_ptr(&f) as usize);
        }
    }
    // SAFETY: `b.lib` is a live dlopen handle (held by `b`); `name` is
    // NUL-terminated. dlerror is cleared first so a null symbol is told apart.
    let sym = unsafe {
        libc::dlerror();
        libc::dlsym(b.lib as *mut c_void, name.as_ptr())
    };
    if sym.is_null() {
        return Err(invalid(format!(
            "the binary ({}) has no kernel named {shown:?}: {}",
            b.origin,
            dlerror()
        )));
    }
    let f = Arc::new(Function {
        binary: b,
        name: shown,
        entry: sym as usize,
    });
    Ok(FUNCTIONS.lock().insert(f))
}

/// The most 8-byte argument words a simulator kernel takes.
pub const MAX_ARG_WORDS: usize = 24;

macro_rules! call_kernel {
    ($entry:expr, $w:expr, $b:expr, $n:expr; $($i:tt)*) => {{
        // SAFETY: `entry` is the address of an exported C function with
        // this signature (the documented convention; `call`'s contract).
        let f = unsafe {
            std::mem::transmute::<usize, unsafe extern "C" fn($(call_kernel!(@ty $i),)* u32, u32)>($entry)
        };
        // SAFETY: as above; the arguments are plain integers.
        unsafe { f($($w[$i],)* $b, $n) }
    }};
    (@ty $i:tt) => { u64 };
}

/// Calls the kernel at `entry` with `words` and the block coordinates.
///
/// # Safety
///
/// `entry` is a C function taking `words.len()` 64-bit integers then two
/// `u32`, loaded and kept loaded; what it does with its arguments is its own
/// business (as a kernel on a device).
unsafe fn call(entry: usize, w: &[u64], block: u32, blocks: u32) -> Result<(), String> {
    match w.len() {
        0 => call_kernel!(entry, w, block, blocks;),
        1 => call_kernel!(entry, w, block, blocks; 0),
        2 => call_kernel!(entry, w, block, blocks; 0 1),
        3 => call_kernel!(entry, w, block, blocks; 0 1 2),
        4 => call_kernel!(entry, w, block, blocks; 0 1 2 3),
        5 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4),
        6 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5),
        7 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6),
        8 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7),
        9 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8),
        10 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9),
        11 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10),
        12 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11),
        13 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12),
        14 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13),
        15 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14),
        16 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15),
        17 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16),
        18 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17),
        19 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
        }
        20 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19)
        }
        21 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
        }
        22 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21)
        }
        23 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22)
        }
        24 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
        }
        n => return Err(format!("{n} argument words (at most {MAX_ARG_WORDS})")),
    }
    Ok(())
}

/// What a launch needs once its arguments are known: the argument words
/// (placeholders not yet resolved) and where placeholders point into `data`.
pub(crate) struct Launch {
    /// The argument words.
    pub words: Vec<u64>,
    /// (word index, offset in `data`) of each placeholder.
    pub placeholders: Vec<(usize, usize)>,
    /// The argument buffer's bytes (placeholder data included).
    pub data: Vec<u8>,
    /// The launch attributes given (kept for a captured launch).
    pub attrs: super::ri_kernel::Attrs,
}

/// `bytes` as little-endian 8-byte words (the last one zero-padded).
pub(crate) fn words_of(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// Validates and queues a launch of `func` on `s` (a stream of `device`),
/// `blocks` times, as an operator task; a launch a capture records keeps
/// what it was made of in the model ([`super::ri_kernel`]).
///
/// # Errors
///
/// As [`task`]; the stream's error when it is being destroyed.
pub(crate) fn launch(
    function: &'static str,
    s: &Arc<Stream>,
    device: u32,
    func: Arc<Function>,
    blocks: u32,
    launch: Launch,
) -> Result<(), Error> {
    let kind = task(function, device, &func, blocks, &launch)?;
    let capturing = s.capture.lock().clone();
    let seq = s.enqueue(|_| kind)?;
    if let Some(m) = capturing {
        m.note_kernel(
            seq,
            Arc::new(super::ri_kernel::Captured {
                func,
                blocks,
                args: launch.data,
                attrs: launch.attrs,
            }),
        );
    }
    Ok(())
}

/// The operator task that runs `func` `blocks` times on `device` with the
/// arguments of `launch`.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] for a kernel of another device, too many
/// argument words, a word pointing into another device's memory.
pub(crate) fn task(
    function: &'static str,
    device: u32,
    func: &Arc<Function>,
    blocks: u32,
    launch: &Launch,
) -> Result<TaskKind, Error> {
    let invalid = |msg: String| Error::new(ErrorKind::ParamInvalid, msg);
    if func.binary.device != device {
        return Err(invalid(format!(
            "kernel {} was loaded on device {}, but the stream is on device {device}; load the \
             binary with a context of that device current",
            func.name, func.binary.device
        )));
    }
    if launch.words.len() > MAX_ARG_WORDS {
        return Err(invalid(format!(
            "kernel {}: the arguments are {} 8-byte words; cann-sim kernels take at most \
             {MAX_ARG_WORDS}",
            func.name,
            launch.words.len()
        )));
    }
    // Words that point into device memory: checked again when the kernel runs.
    let mut ranges = Vec::new();
    {
        let table = state::memory().read();
        for (i, &w) in launch.words.iter().enumerate() {
            if launch.placeholders.iter().any(|&(p, _)| p == i) {
                continue;
            }
            let Ok(region) = table.check_range(w as usize, 1) else {
                continue;
            };
            match region {
                Region::Device { device: d, .. } if d != device => {
                    return Err(invalid(format!(
                        "kernel {}: argument word {i} ({w:#x}) is memory of device {d}, but the \
                         kernel runs on device {device}",
                        func.name
                    )));
                }
                Region::Device { .. } => {
                    if let Some(at) = Expect::of(region) {
                        // Which bytes the kernel touches, and how, is
                        // unknown: an opaque use for the check mode.
                        ranges.push(TaskRange {
                            what: "kernel argument",
                            addr: w as usize,
                            len: 1,
                            at,
                            how: Use::Opaque,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    let name = func.name.clone();
    let func = func.clone();
    let (words, placeholders, data) = (
        launch.words.clone(),
        launch.placeholders.clone(),
        launch.data.clone(),
    );
    let kernel = Arc::new(move || {
        crate::trace::name_task(&name);
        // Each run has its own copy of the words and of the argument buffer
        // (a captured launch runs again at each launch of its graph).
        let mut words = words.clone();
        let data = data.clone();
        // Placeholders point at their data in this task's own copy of the
        // argument buffer (the device copy, on hardware).
        for &(i, offset) in &placeholders {
            words[i] = data.as_ptr() as u64 + offset as u64;
        }
        for block in 0..blocks {
            // SAFETY: `func.entry` is the kernel's exported symbol; `func`
            // holds its binary (so the library) loaded. The convention is
            // the documented one.
            unsafe { call(func.entry, &words, block, blocks) }
                .map_err(|e| Error::new(ErrorKind::KernelFault, format!("kernel {name}: {e}")))?;
        }
        drop(data);
        Ok(())
    });
    Ok(TaskKind::Op {
        api: function,
        ranges,
        kernel,
    })
}

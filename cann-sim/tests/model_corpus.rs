//! The corpus of malformed model files (tests/corpus): each one fails to
//! load with the code its name starts with, and a message, never a panic.

use cann_sim::acl::load_error_code;
use cann_sim::model::LoadErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

mod common;

fn corpus() -> Vec<(PathBuf, i32)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<(PathBuf, i32)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap() != "README.md")
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let code = name
                .split('-')
                .next()
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("{name} does not start with its code"));
            (p, code)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_fails_to_parse_with_the_code_in_its_name() {
    let files = corpus();
    assert!(files.len() >= 40, "{} files", files.len());
    for (path, code) in files {
        let err = cann_sim::model::load_file(&path)
            .err()
            .unwrap_or_else(|| panic!("{} loaded", path.display()));
        assert_eq!(
            load_error_code(&err),
            code,
            "{}: {}",
            path.display(),
            err.message
        );
        assert!(!err.message.is_empty());
        // The same bytes from memory give the same code.
        let bytes = std::fs::read(&path).unwrap();
        let err = cann_sim::model::parse(&bytes).err().unwrap();
        assert_eq!(
            load_error_code(&err),
            code,
            "{} from memory: {}",
            path.display(),
            err.message
        );
    }
}

#[test]
fn missing_files_and_directories_are_invalid_file() {
    let err = cann_sim::model::load_file("/nonexistent/m.json".as_ref()).unwrap_err();
    assert_eq!(err.kind, LoadErrorKind::OpenFile);
    assert_eq!(load_error_code(&err), 100003);
    assert!(err.message.contains("cannot open"), "{}", err.message);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let err = cann_sim::model::load_file(&dir).unwrap_err();
    assert_eq!(load_error_code(&err), 100003, "{}", err.message);
}

#[test]
fn every_corpus_file_fails_to_load_through_the_c_api_with_the_same_code() {
    use std::ffi::CString;
    common::use_device(0);
    for (path, code) in corpus() {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        let mut id = 0u32;
        // SAFETY: NUL-terminated path, valid out-pointer.
        let got = unsafe { cann_sim::acl::aclmdlLoadFromFile(c.as_ptr(), &mut id) };
        let msg = common::assert_fails(got, code, "aclmdlLoadFromFile");
        assert!(
            msg.len() > "aclmdlLoadFromFile: ".len(),
            "{}",
            path.display()
        );
        let bytes = std::fs::read(&path).unwrap();
        if bytes.is_empty() {
            // A null-sized buffer is a parameter error before any parsing.
            continue;
        }
        // SAFETY: `bytes` is valid for its length; valid out-pointer.
        let got = unsafe {
            cann_sim::acl::aclmdlLoadFromMem(bytes.as_ptr().cast(), bytes.len(), &mut id)
        };
        common::assert_fails(got, code, "aclmdlLoadFromMem");
        let (mut w, mut g) = (0usize, 0usize);
        // SAFETY: as above.
        let got = unsafe {
            cann_sim::acl::aclmdlQuerySizeFromMem(
                bytes.as_ptr().cast(),
                bytes.len(),
                &mut w,
                &mut g,
            )
        };
        common::assert_fails(got, code, "aclmdlQuerySizeFromMem");
    }
    let c = CString::new("/nonexistent/m.json").unwrap();
    let mut id = 0u32;
    // SAFETY: as above.
    let got = unsafe { cann_sim::acl::aclmdlLoadFromFile(c.as_ptr(), &mut id) };
    common::assert_fails(got, 100003, "aclmdlLoadFromFile");
}

/// Issue 23: `aclmdlLoadFromFile` on a FIFO blocked for ever (the file was
/// opened before its type was checked). A FIFO, a device and a directory
/// are refused at once with ACL_ERROR_INVALID_FILE, without being opened
/// (the FIFO's writer side never sees a reader).
#[test]
fn special_files_are_refused_through_the_c_api_without_blocking() {
    use std::ffi::CString;
    common::use_device(0);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("model.json");
    let c_fifo = CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
    for (path, kind) in [
        (fifo.clone(), "FIFO"),
        (PathBuf::from("/dev/zero"), "device"),
        (dir.path().to_path_buf(), "directory"),
    ] {
        let shown = path.display().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            common::use_device(0);
            let c = CString::new(path.to_str().unwrap()).unwrap();
            let mut id = 0u32;
            // SAFETY: NUL-terminated path, valid out-pointer.
            let got = unsafe { cann_sim::acl::aclmdlLoadFromFile(c.as_ptr(), &mut id) };
            let _ = tx.send((got, common::recent_error()));
        });
        let Ok((got, msg)) = rx.recv_timeout(std::time::Duration::from_secs(5)) else {
            // Let the blocked load go before failing.
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("aclmdlLoadFromFile({shown}) blocked");
        };
        assert_eq!(got, 100003, "{shown}: {msg}");
        assert_eq!(
            msg,
            format!("aclmdlLoadFromFile: the model path {shown} is not a regular file (a {kind})")
        );
    }
    // Nobody opened the FIFO: a non-blocking writer finds no reader.
    let err = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENXIO));
}

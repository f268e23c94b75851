//! The dump API through the C exports: operator inputs and outputs dumped
//! to files in the simulator's documented format or given to a callback in
//! chunks, operator information files, and each misuse with its code.
//!
//! The dump state is process-wide: the tests take turns (`serial`).

#[path = "common/aclnn.rs"]
#[allow(dead_code)]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_DUMP_NOT_RUN, ACL_ERROR_FAILURE,
    ACL_ERROR_INVALID_DUMP_CONFIG, ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_INITIALIZE, ACL_OP_DUMP_OP_AICORE_ARGS, ACL_SUCCESS, DATA_DUMP, acldumpChunk,
    aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: a null config path.
    let r = unsafe { aclInit(std::ptr::null()) };
    assert!(
        r == ACL_SUCCESS || r == ACL_ERROR_REPEAT_INITIALIZE,
        "aclInit: {r}"
    );
    discard_recent_error();
    use_device(0);
    g
}

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_encoded_bytes()).unwrap()
}

fn set_dump(config: &Path) -> i32 {
    let p = c(config);
    // SAFETY: a NUL-terminated path.
    unsafe { aclmdlSetDump(p.as_ptr()) }
}

fn write_config(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("dump.json");
    std::fs::write(&p, text).unwrap();
    p
}

/// `out = a + b` over `n` f32 with aclnnAdd on `s`.
fn add(a: *mut u8, b: *mut u8, out: *mut u8, n: i64, s: aclrtStream) {
    let r = aclnn_common::add_scaled(a, b, 1.0, out, n, s);
    assert_eq!(r, acl_sys::aclnn::ACLNN_SUCCESS, "{}", recent_error());
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A dump record: its JSON header and the data after it.
fn parse_record(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
    (
        serde_json::from_slice(&bytes[..nl]).unwrap(),
        bytes[nl + 1..].to_vec(),
    )
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The tensor `i` of `list` ("inputs"/"outputs") of a record.
fn tensor_of(header: &serde_json::Value, data: &[u8], list: &str, i: usize) -> Vec<f32> {
    let t = &header[list][i];
    let (off, size) = (
        t["offset"].as_u64().unwrap() as usize,
        t["size"].as_u64().unwrap() as usize,
    );
    f32s(&data[off..off + size])
}

/// A temporary directory with an `out` directory and a dump config file
/// dumping there with the `dump` object's other `fields`.
fn dump_config(fields: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::TempDir::new().unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            r#"{{"dump":{{"dump_path":"{}",{fields}}}}}"#,
            out_dir.display()
        ),
    );
    (dir, out_dir, config)
}

#[test]
fn an_operator_run_while_dumping_writes_its_inputs_and_outputs_to_a_self_describing_file() {
    let _g = serial();
    let (_dir, out_dir, config) =
        dump_config(r#""dump_mode":"all","dump_list":[{}],"dump_op_switch":"on""#);
    ok(aclmdlInitDump());
    ok(set_dump(&config));
    let got = aclmdlInitDump();
    assert_fails(got, ACL_ERROR_REPEAT_INITIALIZE, "aclmdlInitDump");
    // The path is the config's.
    let p = acldumpGetPath(DATA_DUMP);
    assert!(!p.is_null());
    // SAFETY: a NUL-terminated string kept by the simulator.
    let got = unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
    assert_eq!(Path::new(got), out_dir);

    let s = create_stream();
    let a = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let b = aclnn_common::upload(&[10f32, 20., 30., 40.]);
    let out = malloc(16);
    add(a, b, out, 4, s);
    ok(sync(s));
    ok(aclmdlFinalizeDump());
    // After the dump: no more files.
    add(a, b, out, 4, s);
    ok(sync(s));

    let dumped = files(&out_dir);
    assert_eq!(dumped.len(), 1, "{dumped:?}");
    let name = dumped[0].file_name().unwrap().to_str().unwrap().to_string();
    // <stamp>/<device>/<op_type>.<op_type>.<n>.<stream>.<µs>
    assert_eq!(dumped[0].parent().unwrap().file_name().unwrap(), "0");
    assert_eq!(name.split('.').count(), 5, "{name}");
    let (header, data) = parse_record(&std::fs::read(&dumped[0]).unwrap());
    assert_eq!(header["format"], "cann-sim-dump");
    assert_eq!(header["api"], "aclnnAdd");
    assert!(name.starts_with(header["op_type"].as_str().unwrap()));
    assert_eq!(header["outputs"][0]["dtype"], "float32");
    assert_eq!(header["outputs"][0]["shape"], serde_json::json!([4]));
    assert_eq!(tensor_of(&header, &data, "inputs", 0), [1., 2., 3., 4.]);
    assert_eq!(tensor_of(&header, &data, "inputs", 1), [10., 20., 30., 40.]);
    assert_eq!(
        tensor_of(&header, &data, "outputs", 0),
        [11., 22., 33., 44.]
    );
    for p in [a, b, out] {
        free(p);
    }
    destroy_stream(s);
}

#[test]
fn a_statistics_dump_writes_one_csv_row_per_tensor_with_the_items_asked() {
    let _g = serial();
    let (_dir, out_dir, config) = dump_config(
        r#""dump_mode":"all","dump_op_switch":"on","dump_data":"stats","dump_stats":["Max","Min","Avg","Nan","Negative Inf","Positive Inf","L2norm"]"#,
    );
    ok(aclmdlInitDump());
    ok(set_dump(&config));
    let s = create_stream();
    let a = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let b = aclnn_common::upload(&[2f32, f32::NAN, -1., f32::INFINITY]);
    let out = malloc(16);
    add(a, b, out, 4, s);
    ok(sync(s));
    ok(aclmdlFinalizeDump());
    let dumped = files(&out_dir);
    assert_eq!(dumped.len(), 1, "{dumped:?}");
    let name = dumped[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.ends_with(".csv"), "{name}");
    let text = std::fs::read_to_string(&dumped[0]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,Min Value,\
             Avg Value,Nan Count,Negative Inf Count,Positive Inf Count,l2norm",
            "Input,0,16,DT_FLOAT,ND,4,4,4,1,2.5,0,0,0,5.47723",
            "Input,1,16,DT_FLOAT,ND,4,4,inf,-1,nan,1,0,1,nan",
            "Output,0,16,DT_FLOAT,ND,4,4,inf,2,nan,1,0,1,nan",
        ]
    );
    for p in [a, b, out] {
        free(p);
    }
    destroy_stream(s);
}

/// A chunk the callback received: file name, data, last flag, offset.
type Chunk = (String, Vec<u8>, u32, i64);

static CHUNKS: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(chunk: *const acldumpChunk, len: i32) -> i32 {
    // SAFETY: the simulator passes a valid chunk of `len` bytes.
    let ch = unsafe { &*chunk };
    assert!(len as usize >= std::mem::size_of::<acldumpChunk>() + ch.bufLen as usize);
    // SAFETY: `fileName` is NUL-terminated; `dataBuf` holds `bufLen` bytes.
    let (name, data) = unsafe {
        (
            std::ffi::CStr::from_ptr(ch.fileName.as_ptr())
                .to_string_lossy()
                .into_owned(),
            std::slice::from_raw_parts(ch.dataBuf.as_ptr(), ch.bufLen as usize).to_vec(),
        )
    };
    CHUNKS
        .lock()
        .unwrap()
        .push((name, data, ch.isLastChunk, ch.offset));
    0
}

#[test]
fn a_registered_callback_receives_the_dump_in_chunks() {
    let _g = serial();
    CHUNKS.lock().unwrap().clear();
    // SAFETY: a function valid for the whole process.
    ok(unsafe { acldumpRegCallback(Some(collect), 0) });
    ok(aclmdlInitDump());
    let s = create_stream();
    let a = aclnn_common::upload(&[1f32; 4]);
    let out = malloc(16);
    add(a, a, out, 4, s);
    ok(sync(s));
    ok(aclmdlFinalizeDump());
    acldumpUnregCallback();
    let chunks = std::mem::take(&mut *CHUNKS.lock().unwrap());
    assert_eq!(chunks.len(), 1);
    let (name, data, last, offset) = &chunks[0];
    assert_eq!((*last, *offset), (1, 0));
    assert!(name.contains(".0/") || name.contains("/0/"), "{name}");
    let (header, payload) = parse_record(data);
    // Without a config: the outputs.
    assert_eq!(header["inputs"], serde_json::json!([]));
    assert_eq!(tensor_of(&header, &payload, "outputs", 0), [2.; 4]);
    // The name is not a file: nothing was written there.
    assert!(!Path::new(name).exists());
    free(a);
    free(out);
    destroy_stream(s);
}

#[test]
fn op_dump_args_writes_one_information_file_per_operator_shape() {
    let _g = serial();
    let dir = tempfile::TempDir::new().unwrap();
    let args = dir.path().join("args/made");
    let p = c(&args);
    // SAFETY: a NUL-terminated path.
    ok(unsafe { aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, p.as_ptr()) });
    let s = create_stream();
    let x = malloc(32);
    add(x, x, x, 4, s);
    add(x, x, x, 4, s);
    add(x, x, x, 8, s);
    ok(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
    add(x, x, x, 2, s);
    ok(sync(s));
    let mut shapes: Vec<serde_json::Value> = files(&args)
        .iter()
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            assert_eq!(v["inputs"][0]["dtype"], "float32");
            assert_eq!(v["inputs"][0]["format"], "ND");
            v["outputs"][0]["shape"].clone()
        })
        .collect();
    shapes.sort_by_key(|v| v.to_string());
    assert_eq!(shapes, [serde_json::json!([4]), serde_json::json!([8])]);
    free(x);
    destroy_stream(s);
}

#[test]
fn dump_calls_refuse_misuse_with_the_release_codes() {
    let _g = serial();
    let dir = tempfile::TempDir::new().unwrap();
    let good = format!(r#"{{"dump":{{"dump_path":"{}"}}}}"#, dir.path().display());
    let config = write_config(dir.path(), &good);
    // Before aclmdlInitDump.
    assert_fails(set_dump(&config), ACL_ERROR_DUMP_NOT_RUN, "aclmdlSetDump");
    assert_fails(
        aclmdlFinalizeDump(),
        ACL_ERROR_DUMP_NOT_RUN,
        "aclmdlFinalizeDump",
    );
    ok(aclmdlInitDump());
    // SAFETY: a null path is checked.
    assert_fails(
        unsafe { aclmdlSetDump(std::ptr::null()) },
        ACL_ERROR_INVALID_PARAM,
        "aclmdlSetDump",
    );
    // Not a regular file: a directory, a FIFO (never opened).
    assert_fails(
        set_dump(dir.path()),
        ACL_ERROR_INVALID_FILE,
        "aclmdlSetDump",
    );
    let fifo = dir.path().join("fifo");
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o600) }, 0);
    assert_fails(set_dump(&fifo), ACL_ERROR_INVALID_FILE, "aclmdlSetDump");
    let path = dir.path().display();
    for (text, why) in [
        ("not json", "not JSON"),
        (r#"{"dump":{"dump_mode":"output"}}"#, "dump_path is missing"),
        (r#"{"dump":{"dump_path":""}}"#, "dump_path is empty"),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}/none"}}}}"#),
            "does not exist",
        ),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}/fifo"}}}}"#),
            "not a directory",
        ),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}","dump_mode":"x"}}}}"#),
            "dump_mode",
        ),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}","dump_op_switch":1}}}}"#),
            "must be a string",
        ),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}","dump_list":{{}}}}}}"#),
            "must be an array",
        ),
        // `dump_config_converter.cpp` `CheckDumpStats`, `dump_setting.cpp`
        // `InitDumpStatsItem`.
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}","dump_stats":["Max"]}}}}"#),
            "cannot be set when dump.dump_data is \"tensor\"",
        ),
        (
            &format!(r#"{{"dump":{{"dump_path":"{path}","dump_data":"stats","dump_stats":[]}}}}"#),
            "dump_stats is empty",
        ),
        (
            &format!(
                r#"{{"dump":{{"dump_path":"{path}","dump_data":"stats","dump_stats":["Median"]}}}}"#
            ),
            "\"Median\" is not one of",
        ),
    ] {
        let f = write_config(dir.path(), text);
        let msg = assert_fails(set_dump(&f), ACL_ERROR_INVALID_DUMP_CONFIG, "aclmdlSetDump");
        assert_contains(&msg, why);
    }
    for (text, why) in [
        (
            format!(r#"{{"dump":{{"dump_path":"{path}","dump_list":[{{"model_name":"m"}}]}}}}"#),
            "model layer dumps",
        ),
        (
            format!(r#"{{"dump":{{"dump_path":"{path}","dump_debug":"on"}}}}"#),
            "overflow",
        ),
        (
            r#"{"dump":{"dump_scene":"aic_err_brief_dump"}}"#.to_string(),
            "dump_scene",
        ),
    ] {
        let f = write_config(dir.path(), &text);
        let msg = assert_fails(set_dump(&f), ACL_ERROR_API_NOT_SUPPORT, "aclmdlSetDump");
        assert_contains(&msg, why);
    }
    // No path was set by the refused configs.
    assert!(acldumpGetPath(DATA_DUMP).is_null());
    ok(aclmdlFinalizeDump());
    // SAFETY: null and invalid arguments are checked.
    unsafe {
        assert_fails(
            acldumpRegCallback(None, 0),
            ACL_ERROR_FAILURE,
            "acldumpRegCallback",
        );
        assert_fails(
            acldumpRegCallback(Some(collect), 1),
            ACL_ERROR_FAILURE,
            "acldumpRegCallback",
        );
        let p = c(dir.path());
        assert_fails(
            aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, std::ptr::null()),
            ACL_ERROR_FAILURE,
            "aclopStartDumpArgs",
        );
        assert_fails(
            aclopStartDumpArgs(0, p.as_ptr()),
            ACL_ERROR_FAILURE,
            "aclopStartDumpArgs",
        );
        // A path under a FIFO cannot be made.
        let under = c(&fifo.join("x"));
        assert_fails(
            aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, under.as_ptr()),
            ACL_ERROR_FAILURE,
            "aclopStartDumpArgs",
        );
    }
}

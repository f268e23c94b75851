//! `acl::dump` on the simulator: a [`Dump`] guard dumps the operators run
//! while it lives and stops when finished or dropped, a [`DumpCallback`]
//! receives the data instead (a panic in it is caught at the C boundary),
//! an [`OpArgsDump`] writes operator information files; misuse is a clear
//! error. The dump is process-wide: the tests take one lock.

use acl::dump::{Dump, DumpCallback, DumpConfig, DumpMode, OpArgsDump};
use acl::{Device, Error, ErrorCode, Runtime, Tensor, ops};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

static LOCK: Mutex<()> = Mutex::new(());

/// A chunk a callback received: its data, and whether it was the last.
type Chunk = (Vec<u8>, bool);

fn setup() -> (std::sync::MutexGuard<'static, ()>, Runtime, Device) {
    let g = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cann_sim::install().unwrap();
    let rt = Runtime::init().unwrap();
    let npu = Device::new(&rt, 0).unwrap();
    (g, rt, npu)
}

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

/// A 2×2 matmul `a·a` on a new stream of `npu`.
fn matmul(npu: &Device) {
    let s = npu.new_stream().unwrap();
    let a = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let mut c = Tensor::zeros(&s, &[2, 2]).unwrap();
    ops::matmul(&s, &a, &a, &mut c).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [7.0, 10.0, 15.0, 22.0]);
}

#[test]
fn a_dump_guard_dumps_the_operators_run_while_it_lives() {
    cann_sim::sim_only!("reads the simulator's dump file format");
    let (_g, rt, npu) = setup();
    let dir = tempfile::TempDir::new().unwrap();
    let dump = Dump::start(&rt, &DumpConfig::operators(dir.path()).mode(DumpMode::All)).unwrap();
    assert_eq!(dump.path().unwrap().as_deref(), Some(dir.path()));
    // A second dump while one is on.
    let again = Dump::start(&rt, &DumpConfig::operators(dir.path())).unwrap_err();
    assert!(
        matches!(&again, Error::Acl { code, .. } if *code == ErrorCode::RepeatInitialize),
        "{again}"
    );
    matmul(&npu);
    dump.finish().unwrap();
    matmul(&npu); // not dumped
    let dumped = files(dir.path());
    assert_eq!(dumped.len(), 1, "{dumped:?}");
    let bytes = std::fs::read(&dumped[0]).unwrap();
    let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
    let header: serde_json::Value = serde_json::from_slice(&bytes[..nl]).unwrap();
    assert_eq!(header["inputs"].as_array().unwrap().len(), 2);
    assert_eq!(header["outputs"][0]["shape"], serde_json::json!([2, 2]));
    let out = &header["outputs"][0];
    let off = out["offset"].as_u64().unwrap() as usize + nl + 1;
    let got: Vec<f32> = bytes[off..off + 16]
        .chunks(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(got, [7.0, 10.0, 15.0, 22.0]);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn a_dump_into_a_missing_directory_is_refused_and_leaves_the_dump_off() {
    let (_g, rt, _npu) = setup();
    let dir = tempfile::TempDir::new().unwrap();
    let missing = dir.path().join("missing");
    let e = Dump::start(&rt, &DumpConfig::operators(&missing)).unwrap_err();
    assert!(
        matches!(&e, Error::Acl { code, .. } if *code == ErrorCode::InvalidDumpConfig),
        "{e}"
    );
    // The failed start turned the dump off again: a new one starts.
    Dump::start(&rt, &DumpConfig::operators(dir.path()))
        .unwrap()
        .finish()
        .unwrap();
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn a_dump_callback_receives_the_data_and_a_panic_in_it_is_caught() {
    cann_sim::sim_only!("reads the simulator's dump file format");
    let (_g, rt, npu) = setup();
    let got: Arc<Mutex<Vec<Chunk>>> = Arc::default();
    let sink = got.clone();
    let cb = DumpCallback::register(move |c| {
        sink.lock().unwrap().push((c.data.to_vec(), c.is_last));
    })
    .unwrap();
    let second = DumpCallback::register(|_| {}).unwrap_err();
    assert!(matches!(second, Error::InvalidArgument { .. }), "{second}");
    let dir = tempfile::TempDir::new().unwrap();
    let dump = Dump::start(&rt, &DumpConfig::operators(dir.path())).unwrap();
    matmul(&npu);
    dump.finish().unwrap();
    cb.unregister().unwrap();
    let chunks = std::mem::take(&mut *got.lock().unwrap());
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].1);
    let data = &chunks[0].0;
    let nl = data.iter().position(|&b| b == b'\n').unwrap();
    let header: serde_json::Value = serde_json::from_slice(&data[..nl]).unwrap();
    assert_eq!(header["format"], "cann-sim-dump");
    assert!(
        files(dir.path()).is_empty(),
        "the callback takes the data: no file"
    );

    // A panicking callback: caught, counted, the program goes on.
    let before = DumpCallback::panics();
    let cb = DumpCallback::register(|_| panic!("a callback bug")).unwrap();
    let dump = Dump::start(&rt, &DumpConfig::operators(dir.path())).unwrap();
    matmul(&npu);
    dump.finish().unwrap();
    drop(cb);
    assert_eq!(DumpCallback::panics(), before + 1);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn op_args_dump_writes_an_information_file_per_operator_shape() {
    cann_sim::sim_only!("reads the simulator's information file format");
    let (_g, _rt, npu) = setup();
    let dir = tempfile::TempDir::new().unwrap();
    let target = dir.path().join("args");
    let args = OpArgsDump::start(&target).unwrap();
    matmul(&npu);
    matmul(&npu);
    args.stop().unwrap();
    matmul(&npu);
    let infos = files(&target);
    assert_eq!(infos.len(), 1, "{infos:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&infos[0]).unwrap()).unwrap();
    assert_eq!(v["outputs"][0]["shape"], serde_json::json!([2, 2]));
}

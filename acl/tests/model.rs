//! Offline models through the safe API on the simulator: loading (file,
//! memory, with this crate's work and weight memory), the description,
//! synchronous and stream-ordered execution against a host computation,
//! batch, height-width and dims gears, and misuse with its exact errors.

mod common;

use acl::aclop::Format;
use acl::model::{Gear, Gears, Model, ModelDesc, TensorInfo};
use acl::{DataType, Error, ErrorCode};
use cann_sim::model::{self as sim, Constant, IoDesc, Node};
use std::collections::BTreeMap;

fn io(name: &str, format: &str, shape: &[i64]) -> IoDesc {
    IoDesc {
        name: name.into(),
        dtype: "float32".into(),
        format: format.into(),
        shape: shape.to_vec(),
    }
}

fn node(name: &str, op: &str, inputs: &[&str], output: &str) -> Node {
    Node {
        name: name.into(),
        op: op.into(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: vec![output.into()],
        attrs: BTreeMap::new(),
    }
}

const W: [f32; 6] = [1.0, -1.0, 2.0, 0.5, -3.0, 1.0];
const B: [f32; 2] = [0.25, -0.5];

/// y = relu(x · w + b), x: [batch, 3]; batch 2, or gears.
fn dense(gears: &[u64]) -> sim::ModelDesc {
    let mut m = sim::ModelDesc::new("dense");
    let batch = if gears.is_empty() { 2 } else { -1 };
    m.inputs.push(io("x", "ND", &[batch, 3]));
    m.outputs.push(io("y", "ND", &[batch, 2]));
    m.constants.push(Constant {
        name: "w".into(),
        dtype: "float32".into(),
        shape: vec![3, 2],
        data: W.iter().map(|&v| f64::from(v)).collect(),
    });
    m.constants.push(Constant {
        name: "b".into(),
        dtype: "float32".into(),
        shape: vec![2],
        data: B.iter().map(|&v| f64::from(v)).collect(),
    });
    m.nodes.push(node("fc", "MatMul", &["x", "w"], "xw"));
    m.nodes.push(node("bias", "Add", &["xw", "b"], "z"));
    m.nodes.push(node("act", "Relu", &["z"], "y"));
    m.dynamic_batch = gears.to_vec();
    m
}

fn host_dense(x: &[f32]) -> Vec<f32> {
    x.chunks(3)
        .flat_map(|r| {
            (0..2).map(move |j| (r[0] * W[j] + r[1] * W[2 + j] + r[2] * W[4 + j] + B[j]).max(0.0))
        })
        .collect()
}

/// Writes `m` to a temporary file, deleted when the returned path is dropped.
fn write(m: &sim::ModelDesc, tag: &str) -> tempfile::TempPath {
    let path = tempfile::Builder::new()
        .prefix(&format!("acl-model-{tag}-"))
        .suffix(".json")
        .tempfile()
        .unwrap()
        .into_temp_path();
    sim::write(m, &path).unwrap();
    path
}

fn xs(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32 * 0.5 - 2.0).collect()
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn models_and_descriptions_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Model>();
    both::<ModelDesc>();
}

#[test]
fn the_description_reports_inputs_outputs_and_gears() {
    let npu = common::device(0);
    let path = write(&dense(&[1, 2, 4]), "desc");
    let model = Model::load_file(&npu, &path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let d = model.desc();
    assert_eq!(d.inputs().len(), 2);
    assert_eq!(d.num_data_inputs(), 1);
    assert_eq!(
        d.inputs()[0],
        TensorInfo {
            name: "x".into(),
            dims: vec![-1, 3],
            data_type: Some(DataType::Float),
            format: Some(Format::Nd),
            size: 4 * 3 * 4,
        }
    );
    assert_eq!(d.inputs()[1].name, acl::model::GEAR_INPUT_NAME);
    assert_eq!(d.inputs()[1].data_type, Some(DataType::Int64));
    assert_eq!(d.gear_input(), Some(1));
    assert_eq!(d.outputs()[0].name, "y");
    assert_eq!(d.outputs()[0].dims, [-1, 2]);
    assert_eq!(d.outputs()[0].size, 4 * 2 * 4);
    assert_eq!(d.gears(), &Gears::Batch(vec![1, 2, 4]));
    assert_eq!(d.gear_count(), 3);
    assert_eq!(d.input_index("x"), Some(0));
    assert_eq!(d.output_index("y"), Some(0));
    assert_eq!(d.input_index("nope"), None);
    assert!(!model.has_own_memory());
    model.close().unwrap();
}

#[test]
fn sync_and_async_executions_match_the_host() {
    let npu = common::device(0);
    let model = Model::load_data(&npu, &dense(&[]).to_bytes()).unwrap();
    assert_eq!(model.desc().gears(), &Gears::None);
    let stream = npu.new_stream().unwrap();
    let x = xs(6);
    let dx = stream.clone_from_host(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(4).unwrap();
    model
        .execute(&stream, Gear::Static, &[&dx], &mut [&mut dy])
        .unwrap();
    assert_eq!(dy.to_host_vec().unwrap(), host_dense(&x));
    // Synchronous, on memory homed on another stream.
    let other = npu.new_stream().unwrap();
    let x2: Vec<f32> = x.iter().map(|v| -v).collect();
    let dx2 = other.clone_from_host(&x2).unwrap();
    let mut dy2 = other.alloc_zeros::<f32>(4).unwrap();
    model
        .execute_sync(Gear::Static, &[&dx2], &mut [&mut dy2])
        .unwrap();
    assert_eq!(dy2.to_host_vec().unwrap(), host_dense(&x2));
    // Many queued executions in a row, read once at the end.
    for _ in 0..10 {
        model
            .execute(&stream, Gear::Static, &[&dx2], &mut [&mut dy])
            .unwrap();
    }
    assert_eq!(dy.to_host_vec().unwrap(), host_dense(&x2));
    drop(model);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn batch_gears_run_at_the_batch_given() {
    let npu = common::device(0);
    let model = Model::load_data(&npu, &dense(&[1, 2, 4]).to_bytes()).unwrap();
    let stream = npu.new_stream().unwrap();
    for batch in [4u64, 1, 2, 4] {
        let x = xs(3 * batch as usize);
        let dx = stream.clone_from_host(&x).unwrap();
        let mut dy = stream.alloc_zeros::<f32>(2 * batch as usize).unwrap();
        model
            .execute(&stream, Gear::Batch(batch), &[&dx], &mut [&mut dy])
            .unwrap();
        assert_eq!(dy.to_host_vec().unwrap(), host_dense(&x), "batch {batch}");
        let mut dz = stream.alloc_zeros::<f32>(2 * batch as usize).unwrap();
        model
            .execute_sync(Gear::Batch(batch), &[&dx], &mut [&mut dz])
            .unwrap();
        assert_eq!(
            dz.to_host_vec().unwrap(),
            host_dense(&x),
            "sync, batch {batch}"
        );
    }
}

#[test]
fn height_width_gears_set_the_spatial_dimensions() {
    let npu = common::device(0);
    let mut m = sim::ModelDesc::new("hw");
    m.inputs.push(io("img", "NCHW", &[1, 1, -1, -1]));
    m.outputs.push(io("out", "NCHW", &[1, 1, -1, -1]));
    m.nodes.push(node("act", "Relu", &["img"], "out"));
    m.dynamic_hw = vec![[2, 2], [4, 8]];
    let model = Model::load_data(&npu, &m.to_bytes()).unwrap();
    assert_eq!(
        model.desc().gears(),
        &Gears::HeightWidth(vec![(2, 2), (4, 8)])
    );
    assert_eq!(model.desc().inputs()[0].format, Some(Format::Nchw));
    let stream = npu.new_stream().unwrap();
    for (h, w) in [(2u64, 2u64), (4, 8)] {
        let n = (h * w) as usize;
        let x = xs(n);
        let dx = stream.clone_from_host(&x).unwrap();
        let mut dy = stream.alloc_zeros::<f32>(n).unwrap();
        model
            .execute(&stream, Gear::HeightWidth(h, w), &[&dx], &mut [&mut dy])
            .unwrap();
        let want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
        assert_eq!(dy.to_host_vec().unwrap(), want, "{h}x{w}");
    }
}

#[test]
fn models_run_on_memory_this_crate_manages() {
    let npu = common::device(0);
    let path = write(&dense(&[1, 2]), "own");
    let size = Model::query_size(&path).unwrap();
    assert_eq!((size.work, size.weight), (64 + 16, 64 + 8));
    let model = Model::load_file_with_memory(&npu, &path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(model.has_own_memory());
    let stream = npu.new_stream().unwrap();
    let x = xs(6);
    let dx = stream.clone_from_host(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(4).unwrap();
    model
        .execute(&stream, Gear::Batch(2), &[&dx], &mut [&mut dy])
        .unwrap();
    assert_eq!(dy.to_host_vec().unwrap(), host_dense(&x));
    model.close().unwrap();

    let bytes = dense(&[]).to_bytes();
    assert_eq!(Model::query_size_data(&bytes).unwrap().weight, 64 + 8);
    let model = Model::load_data_with_memory(&npu, &bytes).unwrap();
    let dx = stream.clone_from_host(&x).unwrap();
    model
        .execute_sync(Gear::Static, &[&dx], &mut [&mut dy])
        .unwrap();
    assert_eq!(dy.to_host_vec().unwrap(), host_dense(&x));
}

#[test]
fn misuse_is_refused_with_exact_errors() {
    cann_sim::require_devices!(2);
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let model = Model::load_data(&npu, &dense(&[1, 2, 4]).to_bytes()).unwrap();
    let dx = stream.clone_from_host(&xs(6)).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(4).unwrap();

    let e = model
        .execute(&stream, Gear::Batch(3), &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e),
        (
            "Model::execute",
            "Batch(3) is not a gear of the model; its batch gears are [1, 2, 4]".into()
        )
    );
    let e = model
        .execute(&stream, Gear::Static, &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "Static is not a gear of the model; its batch gears are [1, 2, 4]"
    );
    let e = model
        .execute(&stream, Gear::Batch(2), &[], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e),
        ("Model::execute", "0 inputs given, the model takes 1".into())
    );
    let e = model
        .execute_sync(Gear::Batch(2), &[&dx], &mut [])
        .unwrap_err();
    assert_eq!(
        invalid(e),
        (
            "Model::execute_sync",
            "0 outputs given, the model gives 1".into()
        )
    );
    let e = model
        .execute(&stream, Gear::Batch(4), &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "input 0 (x) holds 24 bytes, but the model takes 48"
    );
    let mut small = stream.alloc_zeros::<f32>(3).unwrap();
    let e = model
        .execute(&stream, Gear::Batch(2), &[&dx], &mut [&mut small])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "output 0 (y) holds 12 bytes, but the model takes 16"
    );

    let static_model = Model::load_data(&npu, &dense(&[]).to_bytes()).unwrap();
    let e = static_model
        .execute(&stream, Gear::Batch(2), &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "the model is static; it runs at Gear::Static, not Batch(2)"
    );
    let npu1 = common::device(1);
    let s1 = npu1.new_stream().unwrap();
    let e = static_model
        .execute(&s1, Gear::Static, &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "the model is loaded on device 0, but the stream is on device 1"
    );
    let dx1 = s1.clone_from_host(&xs(6)).unwrap();
    let e = static_model
        .execute(&stream, Gear::Static, &[&dx1], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "input 0 (x) is memory of device 1, but the model is loaded on device 0"
    );

    // Loading.
    let e = Model::load_file(&npu, "/nonexistent/model.json").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFile));
    assert_eq!(e.function(), Some("aclmdlLoadFromFile"));
    assert!(e.message().unwrap().contains("cannot open"), "{e}");
    let e = Model::load_data(&npu, b"{ not json").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::DeserializeModel));
    let e = Model::load_data(&npu, &[]).unwrap_err();
    assert_eq!(
        invalid(e),
        ("Model::load_data", "the model is empty".into())
    );
    let e = Model::load_file(&npu, "a\0b").unwrap_err();
    assert_eq!(
        invalid(e),
        (
            "Model::load_file",
            "the path a\0b contains a NUL byte".into()
        )
    );
    let e = Model::query_size("/nonexistent/model.json").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFile));
}

#[test]
fn dims_gears_run_at_the_dims_given() {
    let npu = common::device(0);
    // c = a · b, a: [-1, 2], b: [2, -1]; gears fix a's rows and b's columns.
    let mut m = sim::ModelDesc::new("dims");
    m.inputs.push(io("a", "ND", &[-1, 2]));
    m.inputs.push(io("b", "ND", &[2, -1]));
    m.outputs.push(io("c", "ND", &[-1, -1]));
    m.nodes.push(node("mm", "MatMul", &["a", "b"], "c"));
    m.dynamic_dims = vec![vec![1, 3], vec![3, 2]];
    let model = Model::load_data(&npu, &m.to_bytes()).unwrap();
    let d = model.desc();
    assert_eq!(d.gears(), &Gears::None);
    assert_eq!(d.dims_gears(), [vec![1, 3], vec![3, 2]]);
    assert_eq!(d.gear_count(), 2);
    assert_eq!(d.gear_input(), Some(2));
    assert_eq!(d.num_data_inputs(), 2);
    assert_eq!(d.dims_gear(&[3, 2]), Some(Gear::Dims(1)));
    assert_eq!(d.dims_gear(&[2, 2]), None);
    let stream = npu.new_stream().unwrap();
    let av = xs(6);
    let bv: Vec<f32> = (0..6).map(|i| 1.0 - i as f32 * 0.75).collect();
    for (k, (rows, cols)) in [(1usize, 3usize), (3, 2)].into_iter().enumerate() {
        let da = stream.clone_from_host(&av[..rows * 2]).unwrap();
        let db = stream.clone_from_host(&bv[..2 * cols]).unwrap();
        let mut dc = stream.alloc_zeros::<f32>(rows * cols).unwrap();
        model
            .execute(&stream, Gear::Dims(k), &[&da, &db], &mut [&mut dc])
            .unwrap();
        let want: Vec<f32> = (0..rows * cols)
            .map(|i| {
                let (r, j) = (i / cols, i % cols);
                av[r * 2] * bv[j] + av[r * 2 + 1] * bv[cols + j]
            })
            .collect();
        assert_eq!(dc.to_host_vec().unwrap(), want, "gear {k}");
        let mut dc2 = stream.alloc_zeros::<f32>(rows * cols).unwrap();
        model
            .execute_sync(Gear::Dims(k), &[&da, &db], &mut [&mut dc2])
            .unwrap();
        assert_eq!(dc2.to_host_vec().unwrap(), want, "gear {k}, synchronous");
    }
    let da = stream.clone_from_host(&av[..2]).unwrap();
    let db = stream.clone_from_host(&bv[..6]).unwrap();
    let mut dc = stream.alloc_zeros::<f32>(3).unwrap();
    let e = model
        .execute(&stream, Gear::Dims(2), &[&da, &db], &mut [&mut dc])
        .unwrap_err();
    assert_eq!(
        invalid(e),
        (
            "Model::execute",
            "Dims(2) is not a gear of the model; it has 2 dims gears [[1, 3], [3, 2]] \
             (Gear::Dims takes an index)"
                .into()
        )
    );
    let e = model
        .execute(&stream, Gear::Batch(1), &[&da, &db], &mut [&mut dc])
        .unwrap_err();
    assert!(
        invalid(e)
            .1
            .starts_with("Batch(1) is not a gear of the model")
    );
    // Gear 1 takes a as [3, 2]: a buffer of one row is refused.
    let e = model
        .execute(&stream, Gear::Dims(1), &[&da, &db], &mut [&mut dc])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "input 0 (a) holds 8 bytes, but the model takes 24"
    );
    let static_model = Model::load_data(&npu, &dense(&[]).to_bytes()).unwrap();
    assert!(static_model.desc().dims_gears().is_empty());
    let dx = stream.clone_from_host(&xs(6)).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(4).unwrap();
    let e = static_model
        .execute(&stream, Gear::Dims(0), &[&dx], &mut [&mut dy])
        .unwrap_err();
    assert_eq!(
        invalid(e).1,
        "the model is static; it runs at Gear::Static, not Dims(0)"
    );
}

#[test]
fn gear_values_above_i64_max_leave_dims_unknown_instead_of_negative() {
    let info = |dims: &[i64], format: Format| TensorInfo {
        name: "x".into(),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float),
        format: Some(format),
        size: 0,
    };
    let huge = 1u64 << 63;
    let x = info(&[-1, 3], Format::Nd);
    assert_eq!(x.dims_at(Some(&Gear::Batch(huge))), [-1, 3]);
    assert_eq!(x.dims_at(Some(&Gear::Batch(4))), [4, 3]);
    let img = info(&[1, 3, -1, -1], Format::Nchw);
    assert_eq!(
        img.dims_at(Some(&Gear::HeightWidth(huge, 8))),
        [1, 3, -1, 8]
    );
    assert_eq!(
        img.dims_at(Some(&Gear::HeightWidth(16, u64::MAX - 1))),
        [1, 3, 16, -1]
    );
    let nhwc = info(&[1, -1, -1, 3], Format::Nhwc);
    assert_eq!(
        nhwc.dims_at(Some(&Gear::HeightWidth(huge, huge))),
        [1, -1, -1, 3]
    );
}

/// Regression (issue 15): a FIFO given as a model path hung forever (the
/// loader opens and reads it whole). It, a directory and a device file are
/// refused at once, without opening them; a missing file stays the
/// runtime's ACL_ERROR_INVALID_FILE.
#[test]
fn model_paths_that_are_not_regular_files_are_refused_without_blocking() {
    let npu = common::device(0);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("model.om");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = std::time::Instant::now();
    let cases: [(&std::path::Path, &str); 3] = [
        (&fifo, "(a FIFO)"),
        (dir.path(), "(a directory)"),
        (std::path::Path::new("/dev/zero"), "(a device)"),
    ];
    let mut messages = Vec::new();
    for (path, kind) in cases {
        for err in [
            Model::load_file(&npu, path).err(),
            Model::load_file_with_memory(&npu, path).err(),
            Model::query_size(path).err(),
        ] {
            let msg = err.expect("refused").to_string();
            assert!(
                msg.contains("is not a regular file") && msg.contains(kind),
                "{msg}"
            );
            messages.push(msg);
        }
    }
    let missing = Model::load_file(&npu, dir.path().join("missing.om")).unwrap_err();

    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(missing.code(), Some(ErrorCode::InvalidFile), "{missing}");
}

/// Regression (issue 15): a Transpose whose `perm` is a constant input (as
/// exported graphs have it) was refused with "[-1,-1] is larger than
/// 2147483648 bytes". Constants are now read by the shape inference, as
/// GE's is, and the model runs.
#[test]
fn a_constant_perm_input_gives_the_exact_shape_and_the_model_runs() {
    cann_sim::sim_only!("loads a model written in the simulator's format (cann_sim::model)");
    let npu = common::device(0);
    let mut m = sim::ModelDesc::new("transpose");
    m.inputs.push(io("x", "ND", &[2, 3]));
    m.outputs.push(io("y", "ND", &[3, 2]));
    m.constants.push(Constant {
        name: "perm".into(),
        dtype: "int64".into(),
        shape: vec![2],
        data: vec![1.0, 0.0],
    });
    m.nodes.push(node("t", "Transpose", &["x", "perm"], "y"));
    let model = Model::load_data(&npu, &m.to_bytes()).unwrap();
    assert_eq!(model.desc().outputs()[0].dims, [3, 2]);
    let stream = npu.new_stream().unwrap();
    let x = xs(6);
    let dx = stream.clone_from_host(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(6).unwrap();
    model
        .execute(&stream, Gear::Static, &[&dx], &mut [&mut dy])
        .unwrap();
    let want: Vec<f32> = (0..3).flat_map(|j| [x[j], x[3 + j]]).collect();
    assert_eq!(dy.to_host_vec().unwrap(), want);
}

/// Regression (issue 15): a model of a few kilobytes whose intermediate
/// tensors need tens of gigabytes of work memory aborted the process (an
/// unchecked host allocation at load). The runtime allocates that memory on
/// the device: it is charged to the simulated HBM and checked against what
/// the host can back, and a model that does not fit is
/// ACL_ERROR_RT_MEMORY_ALLOCATION (207001) with the sizes.
#[test]
fn a_small_model_needing_more_work_memory_than_the_device_has_is_out_of_memory() {
    cann_sim::sim_only!("loads a model written in the simulator's format (cann_sim::model)");
    let npu = common::device(0);
    let mut m = sim::ModelDesc::new("huge-work");
    // 2 GiB per intermediate tensor, 40 of them: 80 GiB of work memory,
    // more than the 64 GiB of a simulated device.
    let big = [1 << 15, 1 << 14];
    m.outputs.push(io("y", "ND", &big));
    m.constants.push(Constant {
        name: "dims".into(),
        dtype: "int64".into(),
        shape: vec![2],
        data: big.iter().map(|&d| d as f64).collect(),
    });
    m.constants.push(Constant {
        name: "one".into(),
        dtype: "float32".into(),
        shape: vec![],
        data: vec![1.0],
    });
    m.nodes.push(node("fill", "Fill", &["dims", "one"], "t0"));
    for i in 1..=40 {
        let (src, dst) = (format!("t{}", i - 1), format!("t{i}"));
        m.nodes.push(node(&dst, "Relu", &[&src], &dst));
    }
    m.nodes.push(node("out", "Relu", &["t40"], "y"));
    let bytes = m.to_bytes();
    assert!(bytes.len() < 8 << 10, "{} bytes", bytes.len());
    let err = Model::load_data(&npu, &bytes).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtMemoryAllocation), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("the model's work and weight memory"), "{msg}");
    // Nothing stays charged: a normal allocation still fits.
    let x = npu.default_stream().alloc_zeros::<u8>(1 << 20).unwrap();
    drop(x);
}

/// Issue 22 (read in the code): `Model::execute(&self)` did not count the
/// model's work memory among its accesses, so two executions of one model
/// on two streams were not ordered with each other (both use that memory).
/// The second execution must wait, on the device, for the first.
#[test]
fn executions_of_one_model_on_two_streams_are_ordered() {
    let npu = common::device(0);
    let path = write(&dense(&[]), "two-streams");
    for model in [
        Model::load_file(&npu, &path).unwrap(),
        Model::load_file_with_memory(&npu, &path).unwrap(),
    ] {
        let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
        let x = xs(6);
        let dx = s1.clone_from_host(&x).unwrap();
        let (mut y1, mut y2) = (
            s1.alloc_zeros::<f32>(4).unwrap(),
            s2.alloc_zeros::<f32>(4).unwrap(),
        );
        s1.synchronize().unwrap();
        s2.synchronize().unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        s1.launch_host_fn(move || {
            let _ = held.recv_timeout(std::time::Duration::from_secs(20));
        })
        .unwrap();
        model
            .execute(&s1, Gear::Static, &[&dx], &mut [&mut y1])
            .unwrap();
        model
            .execute(&s2, Gear::Static, &[&dx], &mut [&mut y2])
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let ran_early = s2.is_complete().unwrap();
        drop(release);
        s1.synchronize().unwrap();
        s2.synchronize().unwrap();
        assert!(
            !ran_early,
            "the second execution ran while the first was still queued"
        );
        assert_eq!(y1.to_host_vec().unwrap(), host_dense(&x));
        assert_eq!(y2.to_host_vec().unwrap(), host_dense(&x));
        model.close().unwrap();
    }
}

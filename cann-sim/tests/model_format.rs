//! The sim model format: a model built with `ModelDesc`, written with
//! `model::write`, loads back with the description it declares, and the
//! executor computes what the host computes at every gear.

use cann_sim::model::{self, Constant, IoDesc, ModelDesc, Node};
use std::collections::BTreeMap;

fn io(name: &str, shape: &[i64]) -> IoDesc {
    IoDesc {
        name: name.into(),
        dtype: "float32".into(),
        format: "ND".into(),
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

/// y = relu(x · w + b), x: [batch, 3], w: [3, 2], b: [2].
fn dense(gears: &[u64]) -> ModelDesc {
    let mut m = ModelDesc::new("dense");
    let batch = if gears.is_empty() { 2 } else { -1 };
    m.inputs.push(io("x", &[batch, 3]));
    m.outputs.push(io("y", &[batch, 2]));
    m.constants.push(Constant {
        name: "w".into(),
        dtype: "float32".into(),
        shape: vec![3, 2],
        data: vec![1.0, -1.0, 2.0, 0.5, -3.0, 1.0],
    });
    m.constants.push(Constant {
        name: "b".into(),
        dtype: "float32".into(),
        shape: vec![2],
        data: vec![0.25, -0.5],
    });
    m.nodes.push(node("fc", "MatMul", &["x", "w"], "xw"));
    m.nodes.push(node("bias", "Add", &["xw", "b"], "z"));
    m.nodes.push(node("act", "Relu", &["z"], "y"));
    m.dynamic_batch = gears.to_vec();
    m
}

fn host_dense(x: &[f32]) -> Vec<f32> {
    let w = [1.0f32, -1.0, 2.0, 0.5, -3.0, 1.0];
    let b = [0.25f32, -0.5];
    x.chunks(3)
        .flat_map(|r| {
            (0..2).map(move |j| (r[0] * w[j] + r[1] * w[2 + j] + r[2] * w[4 + j] + b[j]).max(0.0))
        })
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn a_written_model_loads_with_its_declared_description() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.json");
    model::write(&dense(&[1, 2, 4]), &path).unwrap();
    let m = model::load_file(&path).unwrap();
    assert_eq!(m.name, "dense");
    assert_eq!(m.inputs.len(), 2, "x and the gear input");
    assert_eq!(m.inputs[0].dims, [-1, 3]);
    assert_eq!(m.inputs[0].size, 4 * 3 * 4, "the size at the largest gear");
    assert_eq!(m.inputs[1].name, model::DYNAMIC_INPUT);
    assert_eq!(m.dynamic_input(), Some(1));
    assert_eq!(m.outputs[0].dims, [-1, 2]);
    assert_eq!(m.outputs[0].size, 4 * 2 * 4);
    assert_eq!(m.batch_gears, [1, 2, 4]);
    assert_eq!(m.weight_size, 64 + 8, "two constants, 64-byte aligned");
    assert_eq!(
        m.work_size,
        64 + 32,
        "two intermediates at the largest gear"
    );
}

#[test]
fn execution_matches_the_host_at_every_gear() {
    let m = model::parse(&dense(&[1, 2, 4]).to_bytes()).unwrap();
    for (gear, batch) in [(0usize, 1usize), (1, 2), (2, 4)] {
        let x: Vec<f32> = (0..batch * 3).map(|i| i as f32 * 0.5 - 1.0).collect();
        let out = model::run_on_host(&m, gear, &[&bytes(&x)]).unwrap();
        assert_eq!(floats(&out[0]), host_dense(&x), "batch {batch}");
    }
    let err = model::run_on_host(&m, 1, &[&bytes(&[0.0; 3])]).unwrap_err();
    assert_eq!(err, "input 0 is 12 bytes, expected 24");
}

#[test]
fn a_static_model_has_no_gear_input() {
    let m = model::parse(&dense(&[]).to_bytes()).unwrap();
    assert_eq!(m.inputs.len(), 1);
    assert_eq!(m.dynamic_input(), None);
    assert_eq!(m.gear_count(), 1);
    let x = [1.0f32, 2.0, 3.0, -1.0, 0.0, 4.0];
    let out = model::run_on_host(&m, 0, &[&bytes(&x)]).unwrap();
    assert_eq!(floats(&out[0]), host_dense(&x));
}

#[test]
fn hw_gears_set_the_spatial_dimensions_of_nchw_inputs() {
    let mut m = ModelDesc::new("hw");
    m.inputs.push(IoDesc {
        name: "img".into(),
        dtype: "float32".into(),
        format: "NCHW".into(),
        shape: vec![1, 1, -1, -1],
    });
    m.outputs.push(IoDesc {
        format: "NCHW".into(),
        ..io("out", &[1, 1, -1, -1])
    });
    m.nodes.push(node("act", "Relu", &["img"], "out"));
    m.dynamic_hw = vec![[2, 2], [4, 8]];
    let m = model::parse(&m.to_bytes()).unwrap();
    assert_eq!(m.inputs[0].size, 4 * 32);
    assert_eq!(m.inputs[1].dims, [2], "the gear input holds h and w");
    let x: Vec<f32> = (0..4).map(|i| i as f32 - 2.0).collect();
    let out = model::run_on_host(&m, 0, &[&bytes(&x)]).unwrap();
    assert_eq!(floats(&out[0]), [0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn attributes_of_every_json_form_are_accepted() {
    let mut m = dense(&[]);
    m.nodes[0].attrs =
        serde_json::from_str(r#"{"transpose_x1": false, "transpose_x2": false}"#).unwrap();
    model::parse(&m.to_bytes()).unwrap();
    let mut m = dense(&[]);
    m.nodes[0].attrs = serde_json::from_str(r#"{"transpose_x1": {"data_type": "nope"}}"#).unwrap();
    let err = model::parse(&m.to_bytes()).unwrap_err();
    assert_eq!(cann_sim::acl::load_error_code(&err), 100013);
    assert!(
        err.message.contains("unknown dtype \"nope\""),
        "{}",
        err.message
    );
}

//! Parsing and full validation of a model file into a [`Model`]: the
//! description `aclmdlGetDesc` answers, and the plan the executor runs
//! (where each tensor lives, its shape at each gear).

use super::{
    FORMAT, LoadError, LoadErrorKind, MAX_MODEL_BYTES, MAX_TENSOR_BYTES, ModelDesc, VERSION,
};
use crate::ops::{self, AttrValue, Attrs, DType, TensorSpec};
use std::collections::HashMap;

/// The name of the extra input of a model with gears (`ACL_DYNAMIC_TENSOR_NAME`).
pub const DYNAMIC_INPUT: &str = "ascend_mbatch_shape_data";

/// The most dims gears a model may have (`--dynamic_dims`: 100).
const MAX_DIMS_GEARS: usize = 100;

/// Alignment of each tensor in the work and weight memory.
const ALIGN: usize = 64;

/// A graph input or output as the description reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its layout.
    pub format: Format,
    /// Dimensions; `-1` for the ones a gear sets.
    pub dims: Vec<i64>,
    /// Bytes at the largest gear (`aclmdlGetInputSizeByIndex`).
    pub size: usize,
}

/// The layouts of a model's inputs and outputs (`aclFormat`'s `ND`, `NCHW`,
/// `NHWC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// No layout (`ND`).
    Nd,
    /// `NCHW`.
    Nchw,
    /// `NHWC`.
    Nhwc,
}

/// The longest tensor name, in bytes (the C API's name buffers hold
/// `ACL_MAX_TENSOR_NAME_LEN` = 128 bytes with the NUL).
pub const MAX_NAME_BYTES: usize = 127;
/// The most dimensions of a tensor (`ACL_MAX_DIM_CNT`, the size of
/// `aclmdlIODims`).
pub const MAX_DIMS: usize = 128;
/// The most batch gears (`ACL_MAX_BATCH_NUM`, the size of `aclmdlBatch`).
pub const MAX_BATCH_GEARS: usize = 128;
/// The most height-width gears (`ACL_MAX_HW_NUM`, the size of `aclmdlHW`).
pub const MAX_HW_GEARS: usize = 128;

/// Where a tensor of the graph lives when the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loc {
    /// Graph input `i` (the user's buffer).
    Input(usize),
    /// Graph output `i` (the user's buffer).
    Output(usize),
    /// At this offset of the weight memory.
    Weight(usize),
    /// At this offset of the work memory.
    Work(usize),
}

/// A node, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub name: String,
    pub op: String,
    pub attrs: Attrs,
    /// Tensor ids.
    pub inputs: Vec<usize>,
    /// Tensor ids.
    pub outputs: Vec<usize>,
}

/// A loaded, validated model.
#[derive(Debug, Clone)]
pub struct Model {
    /// Its name.
    pub name: String,
    /// Inputs, the dynamic-gear input last when there are gears.
    pub inputs: Vec<Tensor>,
    /// Outputs.
    pub outputs: Vec<Tensor>,
    /// Batch gears (empty: none).
    pub batch_gears: Vec<u64>,
    /// Height-width gears (empty: none).
    pub hw_gears: Vec<[u64; 2]>,
    /// Dims gears: values of the inputs' `-1` dimensions (empty: none).
    pub dims_gears: Vec<Vec<u64>>,
    /// Bytes of work memory (`aclmdlQuerySize`).
    pub work_size: usize,
    /// Bytes of weight memory (`aclmdlQuerySize`).
    pub weight_size: usize,
    /// The weight memory's content.
    pub(crate) weights: Vec<u8>,
    /// Every tensor's location, by id.
    pub(crate) locs: Vec<Loc>,
    /// Every tensor's spec, per gear (one entry for a static model).
    pub(crate) specs: Vec<Vec<TensorSpec>>,
    /// The operators, in order.
    pub(crate) steps: Vec<Step>,
}

impl Model {
    /// The index of the dynamic-gear input, if the model has gears.
    pub fn dynamic_input(&self) -> Option<usize> {
        self.inputs.iter().position(|t| t.name == DYNAMIC_INPUT)
    }

    /// Number of gears (1 for a static model).
    pub fn gear_count(&self) -> usize {
        self.specs.len()
    }

    /// The dims of every data input (the gear input excluded),
    /// concatenated, at gear `gear` (what `aclmdlGetInputDynamicDims`
    /// reports for a dims gear).
    pub fn gear_shape(&self, gear: usize) -> Vec<i64> {
        let data = self.inputs.len() - usize::from(self.dynamic_input().is_some());
        (0..data)
            .flat_map(
                |i| match self.locs.iter().position(|&l| l == Loc::Input(i)) {
                    Some(id) => self.specs[gear][id].shape.clone(),
                    None => Vec::new(),
                },
            )
            .collect()
    }

    /// Bytes of graph input `i` at gear `gear`.
    pub(crate) fn input_bytes(&self, i: usize, gear: usize) -> usize {
        match self.locs.iter().position(|&l| l == Loc::Input(i)) {
            Some(id) => self.specs[gear][id].bytes(),
            None => self.inputs.get(i).map_or(0, |t| t.size),
        }
    }

    /// Bytes of graph output `i` at gear `gear`.
    pub(crate) fn output_bytes(&self, i: usize, gear: usize) -> usize {
        match self.locs.iter().position(|&l| l == Loc::Output(i)) {
            Some(id) => self.specs[gear][id].bytes(),
            None => 0,
        }
    }
}

fn err(kind: LoadErrorKind, message: impl Into<String>) -> LoadError {
    LoadError {
        kind,
        message: message.into(),
    }
}

fn bad(message: impl Into<String>) -> LoadError {
    err(LoadErrorKind::Invalid, message)
}

/// The element type named `name`.
pub fn dtype_by_name(name: &str) -> Option<DType> {
    Some(match name {
        "float32" | "float" => DType::F32,
        "float16" => DType::F16,
        "bfloat16" => DType::BF16,
        "float64" | "double" => DType::F64,
        "int8" => DType::I8,
        "int16" => DType::I16,
        "int32" => DType::I32,
        "int64" => DType::I64,
        "uint8" => DType::U8,
        "bool" => DType::Bool,
        _ => return None,
    })
}

/// The name [`dtype_by_name`] accepts for `d`.
pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F64 => "float64",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U8 => "uint8",
        DType::Bool => "bool",
    }
}

fn format_by_name(name: &str) -> Option<Format> {
    Some(match name {
        "ND" => Format::Nd,
        "NCHW" => Format::Nchw,
        "NHWC" => Format::Nhwc,
        _ => return None,
    })
}

fn check_name(what: &str, name: &str) -> Result<(), LoadError> {
    if name.is_empty() {
        return Err(bad(format!("{what} has an empty name")));
    }
    if name.len() > MAX_NAME_BYTES || name.contains('\0') {
        return Err(bad(format!(
            "{what} {name:?}: names are at most {MAX_NAME_BYTES} bytes, without NUL"
        )));
    }
    Ok(())
}

fn dtype_of(what: &str, name: &str) -> Result<DType, LoadError> {
    dtype_by_name(name).ok_or_else(|| {
        bad(format!(
            "{what}: unknown dtype {name:?}; expected float32, float16, bfloat16, float64, int8, \
             int32, int64, uint8 or bool"
        ))
    })
}

fn check_rank(what: &str, shape: &[i64]) -> Result<(), LoadError> {
    if shape.len() > MAX_DIMS {
        return Err(bad(format!(
            "{what} has {} dimensions; at most {MAX_DIMS}",
            shape.len()
        )));
    }
    Ok(())
}

fn tensor_bytes(what: &str, spec: &TensorSpec) -> Result<usize, LoadError> {
    if spec.shape.iter().any(|&d| d < 0) {
        // An operator whose output shape depends on the *values* of an
        // input (a `perm`, `axes` or `dims` given as a constant input rather
        // than an attribute): the real runtime's shape inference reads the
        // constant; cann-sim's infers from shapes and attributes only.
        return Err(err(
            LoadErrorKind::NotSupported,
            format!(
                "{what} has unknown dimensions {:?}: its shape depends on the values of a                  constant input (perm, axes or dims), which cann-sim's shape inference does not                  read; give them as the node's attributes",
                spec.shape
            ),
        ));
    }
    match spec.checked_bytes() {
        Some(b) if b <= MAX_TENSOR_BYTES => Ok(b),
        _ => Err(err(
            LoadErrorKind::Size,
            format!(
                "{what} of shape {:?} is larger than the {MAX_TENSOR_BYTES} bytes a cann-sim \
                 tensor may have",
                spec.shape
            ),
        )),
    }
}

/// Converts a JSON attribute value.
fn attr(node: &str, key: &str, v: &serde_json::Value) -> Result<AttrValue, LoadError> {
    use serde_json::Value as J;
    let unsupported = || {
        bad(format!(
            "node {node:?}: attribute {key:?} = {v}: not a supported attribute value (a bool, \
             integer, float, string, a list of one of those, a list of integer lists, or \
             {{\"data_type\": name}})"
        ))
    };
    let int = |n: &serde_json::Number| n.as_i64();
    Ok(match v {
        J::Bool(b) => AttrValue::Bool(*b),
        J::Number(n) if n.is_f64() => AttrValue::Float(n.as_f64().ok_or_else(unsupported)? as f32),
        J::Number(n) => AttrValue::Int(int(n).ok_or_else(unsupported)?),
        J::String(s) => AttrValue::String(s.clone()),
        J::Array(items) if items.is_empty() => AttrValue::ListInt(Vec::new()),
        J::Array(items) => {
            if let Some(b) = items.iter().map(J::as_bool).collect::<Option<Vec<_>>>() {
                AttrValue::ListBool(b)
            } else if let Some(i) = items
                .iter()
                .map(|x| x.as_number().filter(|n| !n.is_f64()).and_then(int))
                .collect::<Option<Vec<_>>>()
            {
                AttrValue::ListInt(i)
            } else if let Some(f) = items.iter().map(J::as_f64).collect::<Option<Vec<_>>>() {
                AttrValue::ListFloat(f.into_iter().map(|x| x as f32).collect())
            } else if let Some(s) = items
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
            {
                AttrValue::ListString(s)
            } else {
                let lists = items
                    .iter()
                    .map(|x| {
                        x.as_array()?
                            .iter()
                            .map(|y| y.as_number().filter(|n| !n.is_f64()).and_then(int))
                            .collect::<Option<Vec<_>>>()
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(unsupported)?;
                AttrValue::ListListInt(lists)
            }
        }
        J::Object(m) if m.len() == 1 => match m.iter().next() {
            Some((k, J::String(name))) if k == "data_type" => AttrValue::DataType(
                dtype_of(&format!("node {node:?}: attribute {key:?}"), name)?.to_acl(),
            ),
            Some((k, J::Array(names))) if k == "data_types" => AttrValue::ListDataType(
                names
                    .iter()
                    .map(|n| {
                        let n = n.as_str().ok_or_else(unsupported)?;
                        Ok(dtype_of(&format!("node {node:?}: attribute {key:?}"), n)?.to_acl())
                    })
                    .collect::<Result<Vec<_>, LoadError>>()?,
            ),
            _ => return Err(unsupported()),
        },
        _ => return Err(unsupported()),
    })
}

/// One constant's bytes.
fn constant_bytes(c: &super::Constant, dtype: DType, numel: usize) -> Result<Vec<u8>, LoadError> {
    let what = format!("constant {:?}", c.name);
    if c.data.len() != numel {
        return Err(bad(format!(
            "{what} has shape {:?} ({numel} elements) but {} values",
            c.shape,
            c.data.len()
        )));
    }
    let mut out = Vec::with_capacity(numel * dtype.size());
    for (i, &v) in c.data.iter().enumerate() {
        let int = |lo: f64, hi: f64| -> Result<i64, LoadError> {
            if v.fract() != 0.0 || v < lo || v > hi {
                return Err(bad(format!(
                    "{what}: value {i} ({v}) is not a {} value",
                    dtype_name(dtype)
                )));
            }
            Ok(v as i64)
        };
        match dtype {
            DType::F32 => out.extend((v as f32).to_le_bytes()),
            DType::F64 => out.extend(v.to_le_bytes()),
            DType::F16 => out.extend(half::f16::from_f64(v).to_le_bytes()),
            DType::BF16 => out.extend(half::bf16::from_f64(v).to_le_bytes()),
            DType::I8 => out.extend((int(-128.0, 127.0)? as i8).to_le_bytes()),
            DType::U8 => out.extend((int(0.0, 255.0)? as u8).to_le_bytes()),
            DType::I16 => out.extend((int(-32768.0, 32767.0)? as i16).to_le_bytes()),
            DType::Bool => out.push(int(0.0, 1.0)? as u8),
            DType::I32 => out.extend((int(-2147483648.0, 2147483647.0)? as i32).to_le_bytes()),
            DType::I64 => {
                out.extend(int(-9.223_372_036_854_776e18, 9.223_372_036_854_775e18)?.to_le_bytes())
            }
        }
    }
    Ok(out)
}

/// Parses and validates model bytes.
///
/// # Errors
///
/// A [`LoadError`] with the code of the problem (see the module docs).
pub fn parse(bytes: &[u8]) -> Result<Model, LoadError> {
    if bytes.is_empty() || bytes.len() > MAX_MODEL_BYTES {
        return Err(super::size_error(bytes.len() as u64));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        err(
            LoadErrorKind::NotJson,
            format!("the model is not valid JSON: {e}"),
        )
    })?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        Some(other) => {
            return Err(err(
                LoadErrorKind::NotAModel,
                format!("the model's format is {other:?}, not {FORMAT:?}"),
            ));
        }
        None => {
            return Err(err(
                LoadErrorKind::NotAModel,
                format!(
                    "not a cann-sim model: a JSON object with \"format\": {FORMAT:?} is expected \
                     (real .om files cannot be loaded by the simulator)"
                ),
            ));
        }
    }
    let desc: ModelDesc = serde_json::from_value(value).map_err(|e| {
        let m = e.to_string();
        if m.starts_with("missing field") {
            err(
                LoadErrorKind::MissingField,
                format!("the model is missing an attribute: {m}"),
            )
        } else {
            bad(format!("the model is malformed: {m}"))
        }
    })?;
    if desc.version != VERSION {
        return Err(bad(format!(
            "model version {} is not supported; this simulator reads version {VERSION}",
            desc.version
        )));
    }
    validate(desc)
}

/// Gear-dependent substitution of `-1` dims.
#[derive(Clone, Copy)]
enum GearKind<'a> {
    Static,
    Batch(u64),
    Hw(u64, u64),
    /// The gear's values; this input's `-1` dims take them from the offset.
    Dims(&'a [u64]),
}

fn gear_dims(dims: &[i64], format: Format, g: GearKind<'_>, offset: usize) -> Vec<i64> {
    let mut out = dims.to_vec();
    match g {
        GearKind::Static => {}
        GearKind::Dims(values) => {
            for (k, d) in (offset..).zip(out.iter_mut().filter(|d| **d == -1)) {
                *d = values.get(k).map_or(-1, |&v| v as i64);
            }
        }
        GearKind::Batch(b) => {
            if let Some(d) = out.first_mut().filter(|d| **d == -1) {
                *d = b as i64;
            }
        }
        GearKind::Hw(h, w) => {
            let (hi, wi) = if format == Format::Nhwc {
                (1, 2)
            } else {
                (2, 3)
            };
            if out.len() == 4 {
                if out[hi] == -1 {
                    out[hi] = h as i64;
                }
                if out[wi] == -1 {
                    out[wi] = w as i64;
                }
            }
        }
    }
    out
}

fn validate(desc: ModelDesc) -> Result<Model, LoadError> {
    if desc.outputs.is_empty() {
        return Err(bad("the model has no outputs"));
    }
    if desc.nodes.is_empty() {
        return Err(bad("the model has no nodes"));
    }
    let kinds = [
        !desc.dynamic_batch.is_empty(),
        !desc.dynamic_hw.is_empty(),
        !desc.dynamic_dims.is_empty(),
    ];
    if kinds.iter().filter(|&&k| k).count() > 1 {
        return Err(bad(
            "the model has more than one kind of gears (dynamic_batch, dynamic_hw, \
             dynamic_dims); a model has one kind at most",
        ));
    }
    let gears: Vec<GearKind> = if !desc.dynamic_batch.is_empty() {
        if desc.dynamic_batch.len() > MAX_BATCH_GEARS {
            return Err(bad(format!("more than {MAX_BATCH_GEARS} batch gears")));
        }
        for (i, &b) in desc.dynamic_batch.iter().enumerate() {
            if b == 0 || b > i32::MAX as u64 || desc.dynamic_batch[..i].contains(&b) {
                return Err(bad(format!(
                    "batch gear {b} is invalid (gears are distinct and from 1 to {})",
                    i32::MAX
                )));
            }
        }
        desc.dynamic_batch
            .iter()
            .map(|&b| GearKind::Batch(b))
            .collect()
    } else if !desc.dynamic_hw.is_empty() {
        if desc.dynamic_hw.len() > MAX_HW_GEARS {
            return Err(bad(format!("more than {MAX_HW_GEARS} height-width gears")));
        }
        for (i, &[h, w]) in desc.dynamic_hw.iter().enumerate() {
            if h == 0
                || w == 0
                || h > i32::MAX as u64
                || w > i32::MAX as u64
                || desc.dynamic_hw[..i].contains(&[h, w])
            {
                return Err(bad(format!(
                    "height-width gear [{h}, {w}] is invalid (gears are distinct and from 1 to {})",
                    i32::MAX
                )));
            }
        }
        desc.dynamic_hw
            .iter()
            .map(|&[h, w]| GearKind::Hw(h, w))
            .collect()
    } else if !desc.dynamic_dims.is_empty() {
        if desc.dynamic_dims.len() > MAX_DIMS_GEARS {
            return Err(bad(format!("more than {MAX_DIMS_GEARS} dims gears")));
        }
        let wanted: usize = desc
            .inputs
            .iter()
            .map(|io| io.shape.iter().filter(|&&d| d == -1).count())
            .sum();
        for (i, g) in desc.dynamic_dims.iter().enumerate() {
            if g.is_empty()
                || g.len() != wanted
                || g.iter().any(|&v| v == 0 || v > i32::MAX as u64)
                || desc.dynamic_dims[..i].contains(g)
            {
                return Err(bad(format!(
                    "dims gear {g:?} is invalid (gears are distinct, with one value from 1 to {} \
                     for each of the inputs' {wanted} -1 dimensions)",
                    i32::MAX
                )));
            }
        }
        desc.dynamic_dims
            .iter()
            .map(|g| GearKind::Dims(g))
            .collect()
    } else {
        vec![GearKind::Static]
    };
    let dynamic = !matches!(gears[0], GearKind::Static);

    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut locs: Vec<Loc> = Vec::new();
    let mut specs: Vec<Vec<TensorSpec>> = vec![Vec::new(); gears.len()];
    let mut inputs = Vec::new();
    let mut uses_gear = false;
    let mut dims_offset = 0usize;

    // Inputs.
    for (i, io) in desc.inputs.iter().enumerate() {
        let what = format!("input {i} ({:?})", io.name);
        check_name(&what, &io.name)?;
        if io.name == DYNAMIC_INPUT {
            return Err(bad(format!(
                "{what}: the name {DYNAMIC_INPUT} is reserved for the gear input"
            )));
        }
        if ids.contains_key(&io.name) {
            return Err(bad(format!("{what}: the name is used twice")));
        }
        let dtype = dtype_of(&what, &io.dtype)?;
        let format = format_by_name(&io.format).ok_or_else(|| {
            bad(format!(
                "{what}: unknown format {:?}; expected ND, NCHW or NHWC",
                io.format
            ))
        })?;
        check_rank(&what, &io.shape)?;
        for (d, &dim) in io.shape.iter().enumerate() {
            if dim < -1 {
                return Err(bad(format!("{what}: dimension {d} is {dim}")));
            }
            if dim == -1 {
                let ok = match gears[0] {
                    GearKind::Static => false,
                    GearKind::Batch(_) => d == 0,
                    GearKind::Dims(_) => format == Format::Nd,
                    GearKind::Hw(..) => {
                        io.shape.len() == 4
                            && format != Format::Nd
                            && if format == Format::Nhwc {
                                d == 1 || d == 2
                            } else {
                                d == 2 || d == 3
                            }
                    }
                };
                if !ok {
                    return Err(bad(format!(
                        "{what}: dimension {d} is -1, but {}",
                        match gears[0] {
                            GearKind::Static => "the model has no gears to set it".to_string(),
                            GearKind::Batch(_) => "batch gears set dimension 0 only".to_string(),
                            GearKind::Hw(..) => "height-width gears set the H and W dimensions of 4-D NCHW or NHWC inputs only".to_string(),
                            GearKind::Dims(_) => "dims gears set dimensions of ND inputs only".to_string(),
                        }
                    )));
                }
                uses_gear = true;
            }
        }
        let mut size = 0;
        for (g, &gear) in gears.iter().enumerate() {
            let spec = TensorSpec {
                dtype,
                shape: gear_dims(&io.shape, format, gear, dims_offset),
            };
            size = size.max(tensor_bytes(&what, &spec)?);
            specs[g].push(spec);
        }
        dims_offset += io.shape.iter().filter(|&&d| d == -1).count();
        ids.insert(io.name.clone(), locs.len());
        locs.push(Loc::Input(i));
        inputs.push(super::Tensor {
            name: io.name.clone(),
            dtype,
            format,
            dims: io.shape.clone(),
            size,
        });
    }
    if dynamic && !uses_gear {
        return Err(bad(
            "the model has gears but no input has a -1 dimension for them to set",
        ));
    }

    // Constants.
    let mut weights: Vec<u8> = Vec::new();
    for (i, c) in desc.constants.iter().enumerate() {
        let what = format!("constant {i} ({:?})", c.name);
        check_name(&what, &c.name)?;
        if ids.contains_key(&c.name) || c.name == DYNAMIC_INPUT {
            return Err(bad(format!("{what}: the name is used twice")));
        }
        let dtype = dtype_of(&what, &c.dtype)?;
        check_rank(&what, &c.shape)?;
        if let Some(d) = c.shape.iter().find(|&&d| d < 0) {
            return Err(bad(format!(
                "{what}: dimension {d}: constants have known shapes"
            )));
        }
        let spec = TensorSpec {
            dtype,
            shape: c.shape.clone(),
        };
        let bytes = tensor_bytes(&what, &spec)?;
        let data = constant_bytes(c, dtype, spec.numel())?;
        debug_assert_eq!(data.len(), bytes);
        let offset = weights.len().div_ceil(ALIGN) * ALIGN;
        weights.resize(offset, 0);
        weights.extend_from_slice(&data);
        ids.insert(c.name.clone(), locs.len());
        locs.push(Loc::Weight(offset));
        for s in &mut specs {
            s.push(spec.clone());
        }
    }

    // Nodes.
    let mut steps = Vec::new();
    let mut work = 0usize;
    let output_index: HashMap<&str, usize> = desc
        .outputs
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();
    if output_index.len() != desc.outputs.len() {
        return Err(bad("two outputs have the same name"));
    }
    for (n, node) in desc.nodes.iter().enumerate() {
        let what = format!("node {n} ({:?}, {})", node.name, node.op);
        if !ops::op_types().contains(&node.op.as_str()) {
            return Err(bad(format!(
                "{what}: op type {:?} is not supported by cann-sim; supported: {}",
                node.op,
                ops::op_types().join(", ")
            )));
        }
        let mut attrs = Attrs::new();
        for (k, v) in &node.attrs {
            attrs.insert(k.clone(), attr(&node.name, k, v)?);
        }
        let mut in_ids = Vec::new();
        for name in &node.inputs {
            let id = *ids.get(name).ok_or_else(|| {
                bad(format!(
                    "{what}: input {name:?} is not a graph input, a constant or the output of an \
                     earlier node"
                ))
            })?;
            in_ids.push(id);
        }
        let mut per_gear_out = Vec::new();
        for s in &specs {
            // Constants are passed with their values, as GE's inference
            // reads them: shapes that depend on a `perm`, `axes` or `dims`
            // input are then exact.
            let in_args: Vec<(&TensorSpec, Option<&[u8]>)> = in_ids
                .iter()
                .map(|&id| {
                    let value = match locs[id] {
                        Loc::Weight(offset) => s[id]
                            .checked_bytes()
                            .and_then(|n| weights.get(offset..offset.checked_add(n)?)),
                        _ => None,
                    };
                    (&s[id], value)
                })
                .collect();
            let out = ops::infer_with_some_values(&node.op, &in_args, &attrs)
                .map_err(|e| bad(format!("{what}: {}", e.message())))?;
            if out.len() != node.outputs.len() {
                return Err(bad(format!(
                    "{what}: the operator has {} output(s) but the node names {}",
                    out.len(),
                    node.outputs.len()
                )));
            }
            per_gear_out.push(out);
        }
        let mut out_ids = Vec::new();
        for (k, name) in node.outputs.iter().enumerate() {
            let owhat = format!("{what}: output {name:?}");
            check_name(&owhat, name)?;
            if ids.contains_key(name) || name == DYNAMIC_INPUT {
                return Err(bad(format!("{owhat}: the name is used twice")));
            }
            let mut max = 0;
            for out in &per_gear_out {
                max = max.max(tensor_bytes(&owhat, &out[k])?);
            }
            let loc = match output_index.get(name.as_str()) {
                Some(&i) => Loc::Output(i),
                None => {
                    let offset = work.div_ceil(ALIGN) * ALIGN;
                    work = offset.checked_add(max).ok_or_else(|| {
                        err(LoadErrorKind::Size, "the work memory size overflows")
                    })?;
                    Loc::Work(offset)
                }
            };
            ids.insert(name.clone(), locs.len());
            out_ids.push(locs.len());
            locs.push(loc);
            for (g, out) in per_gear_out.iter().enumerate() {
                specs[g].push(out[k].clone());
            }
        }
        steps.push(Step {
            name: node.name.clone(),
            op: node.op.clone(),
            attrs,
            inputs: in_ids,
            outputs: out_ids,
        });
    }

    // Outputs: produced by a node, with the declared type and shape.
    let mut outputs = Vec::new();
    for (i, io) in desc.outputs.iter().enumerate() {
        let what = format!("output {i} ({:?})", io.name);
        check_name(&what, &io.name)?;
        let id = *ids
            .get(&io.name)
            .ok_or_else(|| bad(format!("{what} is not produced by any node")))?;
        if locs[id] != Loc::Output(i) {
            return Err(bad(format!(
                "{what} is a graph input or a constant; outputs are produced by nodes"
            )));
        }
        let dtype = dtype_of(&what, &io.dtype)?;
        let format = format_by_name(&io.format).ok_or_else(|| {
            bad(format!(
                "{what}: unknown format {:?}; expected ND, NCHW or NHWC",
                io.format
            ))
        })?;
        check_rank(&what, &io.shape)?;
        let mut size = 0;
        for s in &specs {
            let got = &s[id];
            let shape_ok = got.shape.len() == io.shape.len()
                && got
                    .shape
                    .iter()
                    .zip(&io.shape)
                    .all(|(&g, &d)| d == -1 || g == d);
            if got.dtype != dtype || !shape_ok {
                return Err(bad(format!(
                    "{what} is declared {} {:?} but its node produces {} {:?}",
                    io.dtype,
                    io.shape,
                    dtype_name(got.dtype),
                    got.shape
                )));
            }
            size = size.max(got.bytes());
        }
        outputs.push(super::Tensor {
            name: io.name.clone(),
            dtype,
            format,
            dims: io.shape.clone(),
            size,
        });
    }
    if dynamic {
        let count = match gears[0] {
            GearKind::Hw(..) => 2,
            GearKind::Dims(g) => g.len() as i64,
            _ => 1,
        };
        inputs.push(super::Tensor {
            name: DYNAMIC_INPUT.into(),
            dtype: DType::I64,
            format: Format::Nd,
            dims: vec![count],
            size: 8 * count as usize,
        });
    }
    Ok(Model {
        name: desc.name,
        inputs,
        outputs,
        batch_gears: desc.dynamic_batch,
        hw_gears: desc.dynamic_hw,
        dims_gears: desc.dynamic_dims,
        work_size: work,
        weight_size: weights.len(),
        weights,
        locs,
        specs,
        steps,
    })
}

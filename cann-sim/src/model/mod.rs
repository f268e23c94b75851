//! The simulator's offline-model format, its loader and its executor.
//!
//! Real offline models (`.om`) are a proprietary format produced by ATC.
//! The simulator loads a small, documented JSON graph instead; every
//! `aclmdl*` function that takes a model file or model bytes takes this
//! format. A model is:
//!
//! ```json
//! {
//!   "format": "cann-sim-model",
//!   "version": 1,
//!   "name": "mlp",
//!   "inputs":  [{ "name": "x", "dtype": "float32", "format": "ND", "shape": [-1, 4] }],
//!   "outputs": [{ "name": "probs", "dtype": "float32", "format": "ND", "shape": [-1, 3] }],
//!   "constants": [{ "name": "w", "dtype": "float32", "shape": [4, 3], "data": [0.1, …] }],
//!   "nodes": [
//!     { "name": "fc", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["logits"],
//!       "attrs": { "transpose_x1": false, "transpose_x2": false } },
//!     { "name": "softmax", "op": "SoftmaxV2", "inputs": ["logits"], "outputs": ["probs"],
//!       "attrs": { "axes": [-1] } }
//!   ],
//!   "dynamic_batch": [1, 2, 4, 8]
//! }
//! ```
//!
//! - `inputs`, `outputs`: named, typed, shaped tensors. Data types are
//!   `float32`, `float16`, `bfloat16`, `float64`, `int8`, `int32`, `int64`,
//!   `uint8`, `bool`; formats `ND`, `NCHW`, `NHWC`. `-1` marks a dimension a
//!   dynamic gear sets. Every output is produced by a node.
//! - `constants`: the weights, with their values (`data`, one JSON number
//!   per element, in row-major order).
//! - `nodes`: operators of the simulator's operator library
//!   ([`crate::ops`]), with the real CANN op types, input orders and
//!   attribute names, in an order where every input is defined before use
//!   (a graph input, a constant, or an earlier node's output). Attribute
//!   values: a JSON boolean, integer, float (a number with a fraction or an
//!   exponent), string, a list of one of those, a list of integer lists, or
//!   `{"data_type": "float16"}` for a data type.
//! - `dynamic_batch` (at most 128 gears): inputs whose first dimension is
//!   `-1` take the batch of the gear set with `aclmdlSetDynamicBatchSize`.
//!   `dynamic_hw`, a list of `[h, w]`: NCHW/NHWC inputs with `-1` height
//!   and width take the gear set with `aclmdlSetDynamicHWSize`.
//!   `dynamic_dims` (at most 100 gears), a list of lists: each gear gives a
//!   value for every `-1` dimension of the (ND) inputs, in input and
//!   dimension order (as ATC's `--dynamic_dims`); set with
//!   `aclmdlSetInputDynamicDims`, whose `aclmdlIODims` holds the dims of
//!   all data inputs, concatenated, at the gear. A model has
//!   one kind of gear at most; with gears it has one more input, named
//!   `ascend_mbatch_shape_data` (`ACL_DYNAMIC_TENSOR_NAME`), as ATC adds.
//!
//! Loading checks the file fully and never panics: each problem is a
//! [`LoadError`] with its [`LoadErrorKind`] and a message naming it. The
//! AscendCL exports return the real code of each kind
//! (`cann_sim::acl::load_error_code`):
//!
//! | problem | kind | code |
//! |---|---|---|
//! | the file cannot be opened (missing, a directory) | `OpenFile` | `ACL_ERROR_INVALID_FILE` (100003) |
//! | reading it fails | `ReadFile` | `ACL_ERROR_READ_MODEL_FAILURE` (100014) |
//! | empty, or larger than 1 GiB; a tensor over 2 GiB | `Size` | `ACL_ERROR_MODEL_SIZE_INVALID` (100015) |
//! | not JSON (syntax error, truncated, not UTF-8) | `NotJson` | `ACL_ERROR_DESERIALIZE_MODEL` (100012) |
//! | JSON, but not a `cann-sim-model` object | `NotAModel` | `ACL_ERROR_PARSE_FILE` (100006) |
//! | a required field is missing | `MissingField` | `ACL_ERROR_MODEL_MISSING_ATTR` (100016) |
//! | anything else invalid (types, names, shapes, graph, ops, gears) | `Invalid` | `ACL_ERROR_PARSE_MODEL` (100013) |
//! | a shape only known from a constant's values | `NotSupported` | `ACL_ERROR_API_NOT_SUPPORT` (200001) |

pub(crate) mod build;
pub(crate) mod debug_json;
pub(crate) mod dump;
pub(crate) mod dump_stats;
mod exec;
pub(crate) mod loaded;
mod parse;

pub use exec::run_on_host;
pub use parse::{
    DYNAMIC_INPUT, Format, MAX_BATCH_GEARS, MAX_DIMS, MAX_HW_GEARS, MAX_NAME_BYTES, Model, Tensor,
    dtype_by_name, dtype_name, parse,
};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The value of the `format` field.
pub const FORMAT: &str = "cann-sim-model";
/// The version this simulator reads and writes.
pub const VERSION: u32 = 1;
/// The largest model file or buffer accepted.
pub const MAX_MODEL_BYTES: usize = 1 << 30;
/// The largest tensor accepted (at its largest gear).
pub const MAX_TENSOR_BYTES: usize = 1 << 31;

/// A model, as stored in a file: what [`write()`] writes and [`parse()`] reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDesc {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The model's name.
    pub name: String,
    /// Graph inputs, in order.
    pub inputs: Vec<IoDesc>,
    /// Graph outputs, in order (each produced by a node).
    pub outputs: Vec<IoDesc>,
    /// Weights.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constants: Vec<Constant>,
    /// Operators, each input defined before use.
    pub nodes: Vec<Node>,
    /// Batch gears.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_batch: Vec<u64>,
    /// Height-width gears.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_hw: Vec<[u64; 2]>,
    /// Dims gears: each a value for every `-1` dimension of the inputs, in
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_dims: Vec<Vec<u64>>,
}

/// A graph input or output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoDesc {
    /// Its name (unique among the model's tensors).
    pub name: String,
    /// Data type name (`float32`, …).
    pub dtype: String,
    /// Format name (`ND`, `NCHW`, `NHWC`).
    #[serde(default = "nd")]
    pub format: String,
    /// Dimensions; `-1` for one a gear sets.
    pub shape: Vec<i64>,
}

fn nd() -> String {
    "ND".into()
}

/// A constant (weight) tensor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constant {
    /// Its name.
    pub name: String,
    /// Data type name.
    pub dtype: String,
    /// Dimensions (all known).
    pub shape: Vec<i64>,
    /// The values, row-major, one per element.
    pub data: Vec<f64>,
}

/// An operator of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Its name (for messages).
    pub name: String,
    /// The CANN op type (`MatMul`, `Add`, `Relu`, `SoftmaxV2`…).
    pub op: String,
    /// Input tensor names, in the op's input order.
    pub inputs: Vec<String>,
    /// Output tensor names, in the op's output order.
    pub outputs: Vec<String>,
    /// Attributes by name (see the module docs for the value forms).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attrs: BTreeMap<String, serde_json::Value>,
}

impl ModelDesc {
    /// An empty model named `name` (format and version set).
    pub fn new(name: impl Into<String>) -> ModelDesc {
        ModelDesc {
            format: FORMAT.into(),
            version: VERSION,
            name: name.into(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            constants: Vec::new(),
            nodes: Vec::new(),
            dynamic_batch: Vec::new(),
            dynamic_hw: Vec::new(),
            dynamic_dims: Vec::new(),
        }
    }

    /// The model file's bytes (pretty-printed JSON).
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serialising these plain structs cannot fail (string keys only).
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }
}

/// What kind of problem keeps a model from loading (see the module
/// documentation for each kind's code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadErrorKind {
    /// The file cannot be opened, or is not a regular file.
    OpenFile,
    /// Reading the file fails.
    ReadFile,
    /// Writing the file fails ([`write()`]).
    WriteFile,
    /// Empty, or too large; a tensor too large.
    Size,
    /// Not JSON.
    NotJson,
    /// JSON, but not a `cann-sim-model` object.
    NotAModel,
    /// A required field is missing.
    MissingField,
    /// Anything else invalid.
    Invalid,
    /// A shape the simulator's inference cannot know.
    NotSupported,
}

/// Why a model cannot be loaded: what kind of problem, and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// What kind of problem.
    pub kind: LoadErrorKind,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?})", self.message, self.kind)
    }
}

impl std::error::Error for LoadError {}

/// Writes `desc` as a model file at `path`, after checking that it loads.
///
/// # Errors
///
/// The [`LoadError`] the model would fail to load with, or the I/O error
/// (as a `LoadError` of kind [`LoadErrorKind::WriteFile`]).
pub fn write(desc: &ModelDesc, path: impl AsRef<Path>) -> Result<(), LoadError> {
    let bytes = desc.to_bytes();
    parse(&bytes)?;
    std::fs::write(path.as_ref(), bytes).map_err(|e| LoadError {
        kind: LoadErrorKind::WriteFile,
        message: format!("cannot write {}: {e}", path.as_ref().display()),
    })
}

/// Reads and parses the model file at `path`.
///
/// # Errors
///
/// A [`LoadError`] as the module docs list.
pub fn load_file(path: &Path) -> Result<Model, LoadError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let cannot_open = |e: std::io::Error| LoadError {
        kind: LoadErrorKind::OpenFile,
        message: format!("cannot open the model file {shown}: {e}"),
    };
    let not_regular = |m: &std::fs::Metadata| LoadError {
        kind: LoadErrorKind::OpenFile,
        message: format!(
            "the model path {shown} is not a regular file (a {})",
            file_kind(&m.file_type())
        ),
    };
    // The type is checked before opening: opening a FIFO blocks until a
    // writer comes, and opening a device may act on it. The open itself is
    // non-blocking, in case a FIFO takes the file's place in between (the
    // type is checked again on what was opened); reads of a regular file
    // are unaffected by the flag.
    let meta = std::fs::metadata(path).map_err(cannot_open)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot_open)?;
    let meta = f.metadata().map_err(|e| LoadError {
        kind: LoadErrorKind::ReadFile,
        message: format!("cannot read the model file {shown}: {e}"),
    })?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    if meta.len() > MAX_MODEL_BYTES as u64 {
        return Err(size_error(meta.len()));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| LoadError {
        kind: LoadErrorKind::ReadFile,
        message: format!("cannot read the model file {shown}: {e}"),
    })?;
    parse(&bytes).map_err(|e| LoadError {
        kind: e.kind,
        message: format!("{shown}: {}", e.message),
    })
}

/// What a file that is not a regular one is, for messages: `directory`,
/// `FIFO`, `socket`, `device`, `symbolic link` or `special file`.
pub fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

fn size_error(len: u64) -> LoadError {
    LoadError {
        kind: LoadErrorKind::Size,
        message: if len == 0 {
            "the model is empty (0 bytes)".into()
        } else {
            format!("the model is {len} bytes; cann-sim loads models of at most {MAX_MODEL_BYTES}")
        },
    }
}

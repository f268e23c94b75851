//! [`ModelDesc`]: what a loaded model takes and gives, read once at load
//! (`aclmdlCreateDesc`, `aclmdlGetDesc` and the getters).

use crate::aclop::Format;
use crate::error::Result;
use crate::memory::DataType;
use crate::result::{self, raw};

/// The name of the extra input of a model with gears
/// (`ACL_DYNAMIC_TENSOR_NAME`); [`crate::model::Model::execute`] fills it.
pub const GEAR_INPUT_NAME: &str = "ascend_mbatch_shape_data";

/// One input or output of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// Its name (`aclmdlGetInputNameByIndex`).
    pub name: String,
    /// Dimensions; `-1` for one a gear sets (`aclmdlGetInputDims`).
    pub dims: Vec<i64>,
    /// Element type (`aclmdlGetInputDataType`), `None` for one this crate
    /// does not name.
    pub data_type: Option<DataType>,
    /// Layout (`aclmdlGetInputFormat`), `None` for one this crate does not name.
    pub format: Option<Format>,
    /// Bytes at the largest gear (`aclmdlGetInputSizeByIndex`).
    pub size: usize,
}

/// The gears of a dynamic model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gears {
    /// A static model.
    None,
    /// Batch sizes (`aclmdlGetDynamicBatch`).
    Batch(Vec<u64>),
    /// Height-width pairs (`aclmdlGetDynamicHW`).
    HeightWidth(Vec<(u64, u64)>),
}

/// The description of a loaded model.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDesc {
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
    gear_input: Option<usize>,
    gears: Gears,
    dims_gears: Vec<Vec<i64>>,
}

/// Frees an `aclmdlDesc` when dropped.
struct RawDesc(*mut raw::aclmdlDesc);

impl Drop for RawDesc {
    fn drop(&mut self) {
        // SAFETY: made by `aclmdlCreateDesc`, destroyed once.
        if let Err(e) = unsafe { result::mdl_destroy_desc(self.0) } {
            crate::release::record("ModelDesc", e);
        }
    }
}

impl ModelDesc {
    /// A description of nothing (before the real one is read).
    pub(crate) fn empty() -> ModelDesc {
        ModelDesc {
            inputs: Vec::new(),
            outputs: Vec::new(),
            gear_input: None,
            gears: Gears::None,
            dims_gears: Vec::new(),
        }
    }

    /// Reads the description of model `id` (the device bound).
    pub(crate) fn read(id: u32) -> Result<ModelDesc> {
        let d = RawDesc(result::mdl_create_desc()?);
        // SAFETY: a live description.
        unsafe { result::mdl_get_desc(d.0, id) }?;
        // SAFETY: a live, filled description (so are the calls below).
        let n_in = unsafe { result::mdl_get_num_inputs(d.0) }?;
        // SAFETY: as above.
        let n_out = unsafe { result::mdl_get_num_outputs(d.0) }?;
        let mut inputs = Vec::with_capacity(n_in);
        for i in 0..n_in {
            // SAFETY: as above.
            let (dims, name, dt, fmt, size) = unsafe {
                (
                    result::mdl_get_input_dims(d.0, i)?,
                    result::mdl_get_input_name_by_index(d.0, i)?,
                    result::mdl_get_input_data_type(d.0, i)?,
                    result::mdl_get_input_format(d.0, i)?,
                    result::mdl_get_input_size_by_index(d.0, i)?,
                )
            };
            inputs.push(info(name, &dims, dt, fmt, size));
        }
        let mut outputs = Vec::with_capacity(n_out);
        for i in 0..n_out {
            // SAFETY: as above.
            let (dims, name, dt, fmt, size) = unsafe {
                (
                    result::mdl_get_output_dims(d.0, i)?,
                    result::mdl_get_output_name_by_index(d.0, i)?,
                    result::mdl_get_output_data_type(d.0, i)?,
                    result::mdl_get_output_format(d.0, i)?,
                    result::mdl_get_output_size_by_index(d.0, i)?,
                )
            };
            outputs.push(info(name, &dims, dt, fmt, size));
        }
        // SAFETY: as above.
        let batch = unsafe { result::mdl_get_dynamic_batch(d.0) }?;
        // SAFETY: as above.
        let hw = unsafe { result::mdl_get_dynamic_hw(d.0, usize::MAX) }?;
        let gears = if batch.batchCount > 0 {
            Gears::Batch(batch.batch[..batch.batchCount.min(batch.batch.len())].to_vec())
        } else if hw.hwCount > 0 {
            Gears::HeightWidth(
                hw.hw[..hw.hwCount.min(hw.hw.len())]
                    .iter()
                    .map(|p| (p[0], p[1]))
                    .collect(),
            )
        } else {
            Gears::None
        };
        // SAFETY: as above.
        let count = unsafe { result::mdl_get_input_dynamic_gear_count(d.0, usize::MAX) }?;
        let mut dims_gears = Vec::new();
        if gears == Gears::None && count > 0 {
            let mut all = vec![raw::aclmdlIODims::default(); count];
            // SAFETY: as above.
            unsafe { result::mdl_get_input_dynamic_dims(d.0, usize::MAX, &mut all) }?;
            // The declared dims of the data inputs, concatenated: a gear's
            // values are its dims where these are -1.
            let declared: Vec<i64> = inputs
                .iter()
                .filter(|t| t.name != GEAR_INPUT_NAME)
                .flat_map(|t| t.dims.iter().copied())
                .collect();
            for g in &all {
                let shape = &g.dims[..g.dimCount.min(g.dims.len())];
                dims_gears.push(
                    declared
                        .iter()
                        .zip(shape)
                        .filter(|(d, _)| **d == -1)
                        .map(|(_, &v)| v)
                        .collect(),
                );
            }
        }
        let gear_input = if gears == Gears::None && dims_gears.is_empty() {
            None
        } else {
            inputs.iter().position(|t| t.name == GEAR_INPUT_NAME)
        };
        drop(d);
        Ok(ModelDesc {
            inputs,
            outputs,
            gear_input,
            gears,
            dims_gears,
        })
    }

    /// Every input, the gear input included (`aclmdlGetNumInputs`).
    #[doc(alias = "aclmdlGetNumInputs")]
    pub fn inputs(&self) -> &[TensorInfo] {
        &self.inputs
    }

    /// Every output (`aclmdlGetNumOutputs`).
    #[doc(alias = "aclmdlGetNumOutputs")]
    pub fn outputs(&self) -> &[TensorInfo] {
        &self.outputs
    }

    /// The inputs the caller gives to [`crate::model::Model::execute`]:
    /// every input but the gear input.
    pub fn data_inputs(&self) -> impl Iterator<Item = &TensorInfo> {
        self.inputs
            .iter()
            .enumerate()
            .filter(move |(i, _)| Some(*i) != self.gear_input)
            .map(|(_, t)| t)
    }

    /// Number of inputs the caller gives (the gear input excluded).
    pub fn num_data_inputs(&self) -> usize {
        self.inputs.len() - usize::from(self.gear_input.is_some())
    }

    /// The index of the gear input (`ascend_mbatch_shape_data`), for a
    /// model with gears.
    pub fn gear_input(&self) -> Option<usize> {
        self.gear_input
    }

    /// The model's batch or height-width gears (`Gears::None` for a
    /// static model and for one with dims gears: see
    /// [`dims_gears`](Self::dims_gears)).
    #[doc(alias = "aclmdlGetDynamicBatch")]
    #[doc(alias = "aclmdlGetDynamicHW")]
    pub fn gears(&self) -> &Gears {
        &self.gears
    }

    /// The model's dims gears (ATC's `--dynamic_dims`; empty for a model
    /// without them): each the values of the `-1` dimensions of the data
    /// inputs, in input and dimension order. Run at one with
    /// [`Gear::Dims`](crate::model::Gear::Dims) and its index here.
    #[doc(alias = "aclmdlGetInputDynamicDims")]
    pub fn dims_gears(&self) -> &[Vec<i64>] {
        &self.dims_gears
    }

    /// The [`Gear::Dims`](crate::model::Gear::Dims) whose values are
    /// `values`, if the model has that dims gear.
    pub fn dims_gear(&self, values: &[i64]) -> Option<crate::model::Gear> {
        self.dims_gears
            .iter()
            .position(|g| g == values)
            .map(crate::model::Gear::Dims)
    }

    /// Dims of data input `k` (the gear input excluded) at dims gear
    /// `values`: its `-1` dimensions take the gear's values, after those
    /// of the inputs before it.
    pub(crate) fn data_input_dims_at(&self, k: usize, values: &[i64]) -> Vec<i64> {
        let mut offset = 0;
        let mut out = Vec::new();
        for (i, t) in self.data_inputs().enumerate() {
            let n = t.dims.iter().filter(|&&d| d == -1).count();
            if i == k {
                let mut it = values.iter().skip(offset);
                out = t
                    .dims
                    .iter()
                    .map(|&d| {
                        if d == -1 {
                            it.next().copied().unwrap_or(-1)
                        } else {
                            d
                        }
                    })
                    .collect();
                break;
            }
            offset += n;
        }
        out
    }

    /// Number of gears (0 for a static model).
    #[doc(alias = "aclmdlGetInputDynamicGearCount")]
    pub fn gear_count(&self) -> usize {
        match &self.gears {
            Gears::None => self.dims_gears.len(),
            Gears::Batch(v) => v.len(),
            Gears::HeightWidth(v) => v.len(),
        }
    }

    /// The index of the input named `name`.
    #[doc(alias = "aclmdlGetInputIndexByName")]
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|t| t.name == name)
    }

    /// The index of the output named `name`.
    #[doc(alias = "aclmdlGetOutputIndexByName")]
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|t| t.name == name)
    }
}

fn info(
    name: String,
    dims: &raw::aclmdlIODims,
    dt: raw::aclDataType,
    fmt: raw::aclFormat,
    size: usize,
) -> TensorInfo {
    TensorInfo {
        name,
        dims: dims.dims[..dims.dimCount.min(dims.dims.len())].to_vec(),
        data_type: DataType::from_raw(dt),
        format: Format::from_raw(fmt),
        size,
    }
}

impl TensorInfo {
    /// Bytes at a gear: `None` when a dimension stays unknown or the type
    /// has no size.
    pub(crate) fn bytes_at(&self, gear: Option<&crate::model::Gear>) -> Option<usize> {
        self.bytes_of(&self.dims_at(gear))
    }

    /// Bytes of this tensor's type at `dims`: `None` when a dimension is
    /// unknown or the type has no size.
    pub(crate) fn bytes_of(&self, dims: &[i64]) -> Option<usize> {
        let elem = self.data_type?.size();
        dims.iter().try_fold(elem, |acc, &d| {
            usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
    }

    /// Dimensions at a gear (`-1` where it sets none; a dims gear sets
    /// none here, as its values depend on the other inputs). A gear value
    /// above `i64::MAX`, which no model has, sets none either: as an
    /// `int64_t` dimension it would be negative.
    pub fn dims_at(&self, gear: Option<&crate::model::Gear>) -> Vec<i64> {
        use crate::model::Gear;
        /// Sets `dim` to `value` where it is unknown (-1) and `value` fits.
        fn set(dim: Option<&mut i64>, value: u64) {
            if let Some(d) = dim.filter(|d| **d == -1) {
                *d = i64::try_from(value).unwrap_or(-1);
            }
        }
        let mut dims = self.dims.clone();
        match gear {
            Some(Gear::Batch(b)) => set(dims.first_mut(), *b),
            Some(Gear::HeightWidth(h, w)) if dims.len() == 4 => {
                let (hi, wi) = match self.format {
                    Some(Format::Nhwc) => (1, 2),
                    _ => (2, 3),
                };
                set(dims.get_mut(hi), *h);
                set(dims.get_mut(wi), *w);
            }
            _ => {}
        }
        dims
    }
}

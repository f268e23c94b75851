//! Running a loaded model: each node through [`crate::ops::run`], reading
//! and writing the memory the plan assigns (user inputs and outputs, the
//! work memory, the weight memory).

use super::parse::{Loc, Model};
use crate::ops::{self, Input, Output};

/// The gear an execution runs at (an index into the model's gears; 0 for a
/// static model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gear(pub usize);

/// The memory of one execution: first addresses.
#[derive(Debug, Clone)]
pub(crate) struct Memory {
    /// Graph inputs (the gear input included).
    pub inputs: Vec<usize>,
    /// Graph outputs.
    pub outputs: Vec<usize>,
    /// Work memory (`model.work_size` bytes).
    pub work: usize,
    /// Weight memory (`model.weight_size` bytes, holding the weights).
    pub weights: usize,
}

fn overlaps(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    alen > 0 && blen > 0 && a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// Runs `model` at `gear` over `mem`.
///
/// # Safety
///
/// Every range the plan names (each input and output at its size at this
/// gear, the work and weight memory at their sizes) is live memory that
/// nothing else accesses while this runs (the caller holds the allocation
/// table's read lock and validated them); the output ranges do not overlap
/// each other nor the work and weight memory.
///
/// # Errors
///
/// The failing node and why.
pub(crate) unsafe fn execute(model: &Model, gear: Gear, mem: &Memory) -> Result<(), String> {
    let specs = model
        .specs
        .get(gear.0)
        .ok_or_else(|| format!("gear {} does not exist", gear.0))?;
    let addr = |id: usize| -> usize {
        match model.locs[id] {
            Loc::Input(i) => mem.inputs.get(i).copied().unwrap_or(0),
            Loc::Output(i) => mem.outputs.get(i).copied().unwrap_or(0),
            Loc::Weight(o) => mem.weights + o,
            Loc::Work(o) => mem.work + o,
        }
    };
    for step in &model.steps {
        let out_ranges: Vec<(usize, usize)> = step
            .outputs
            .iter()
            .map(|&id| (addr(id), specs[id].bytes()))
            .collect();
        // Inputs that alias an output of this node (a user input buffer
        // that is also an output buffer) are copied first.
        let copies: Vec<Option<Vec<u8>>> = step
            .inputs
            .iter()
            .map(|&id| {
                let (a, len) = (addr(id), specs[id].bytes());
                out_ranges
                    .iter()
                    .any(|&(b, blen)| overlaps(a, len, b, blen))
                    // SAFETY: a live range of `len` bytes (the caller's
                    // contract); no `&mut` to it exists yet.
                    .then(|| unsafe { std::slice::from_raw_parts(a as *const u8, len) }.to_vec())
            })
            .collect();
        let ins: Vec<Input<'_>> = step
            .inputs
            .iter()
            .zip(&copies)
            .map(|(&id, copy)| Input {
                spec: &specs[id],
                data: match copy {
                    Some(c) => c.as_slice(),
                    None if specs[id].bytes() == 0 => &[],
                    // SAFETY: a live range no output of this node overlaps
                    // (those were copied); only read.
                    None => unsafe {
                        std::slice::from_raw_parts(addr(id) as *const u8, specs[id].bytes())
                    },
                },
            })
            .collect();
        let mut outs: Vec<Output<'_>> = step
            .outputs
            .iter()
            .map(|&id| Output {
                spec: &specs[id],
                data: if specs[id].bytes() == 0 {
                    &mut []
                } else {
                    // SAFETY: a live range; outputs of a node are distinct
                    // tensors at disjoint places (work offsets are
                    // disjoint, user outputs do not overlap), and no input
                    // slice overlaps it (copied above).
                    unsafe {
                        std::slice::from_raw_parts_mut(addr(id) as *mut u8, specs[id].bytes())
                    }
                },
            })
            .collect();
        ops::run(&step.op, &ins, &step.attrs, &mut outs)
            .map_err(|e| format!("node {:?} ({}) failed: {}", step.name, step.op, e.message()))?;
    }
    Ok(())
}

/// Runs `model` on host buffers (for tests of the format and the executor):
/// `inputs` (the gear input excluded) at `gear`; returns the outputs.
///
/// # Errors
///
/// A wrong input count or size, or the failing node.
pub fn run_on_host(model: &Model, gear: usize, inputs: &[&[u8]]) -> Result<Vec<Vec<u8>>, String> {
    if gear >= model.gear_count() {
        return Err(format!("gear {gear} does not exist"));
    }
    let data_inputs = model.inputs.len() - usize::from(model.dynamic_input().is_some());
    if inputs.len() != data_inputs {
        return Err(format!(
            "{} inputs given, the model has {data_inputs}",
            inputs.len()
        ));
    }
    for (i, data) in inputs.iter().enumerate() {
        let want = model.input_bytes(i, gear);
        if data.len() != want {
            return Err(format!(
                "input {i} is {} bytes, expected {want}",
                data.len()
            ));
        }
    }
    let mut outputs: Vec<Vec<u8>> = (0..model.outputs.len())
        .map(|i| vec![0u8; model.output_bytes(i, gear)])
        .collect();
    let mut work = vec![0u8; model.work_size];
    let weights = model.weights.clone();
    let mem = Memory {
        inputs: inputs.iter().map(|d| d.as_ptr() as usize).collect(),
        outputs: outputs
            .iter_mut()
            .map(|o| o.as_mut_ptr() as usize)
            .collect(),
        work: work.as_mut_ptr() as usize,
        weights: weights.as_ptr() as usize,
    };
    // SAFETY: every range lies in the vectors above (sizes as the plan's at
    // this gear), which live until after the call and are not otherwise
    // accessed meanwhile; the outputs are separate vectors.
    unsafe { execute(model, Gear(gear), &mem) }?;
    drop(work);
    Ok(outputs)
}

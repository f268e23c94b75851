//! Loaded models: each with its device, work memory and weight memory (the
//! runtime's, charged to the device's HBM, or the caller's), named by an id
//! from 1 up, and run by [`Loaded::run`].

use super::exec::{Gear, Memory, execute};
use super::parse::Model;
use crate::rt::stream::Expect;
use crate::state;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// Memory of a loaded model: the simulator's own, or the caller's.
#[derive(Debug)]
pub(crate) enum ModelMem {
    /// Host memory the simulator owns.
    Owned(Vec<u8>),
    /// The caller's device memory: first byte, bytes, and where it must still be.
    User {
        addr: usize,
        size: usize,
        at: Option<Expect>,
    },
}

impl ModelMem {
    /// The caller's range (first byte, bytes), when it is the caller's.
    pub(crate) fn user_range(&self) -> Option<(usize, usize)> {
        match self {
            ModelMem::User { addr, size, .. } => Some((*addr, *size)),
            ModelMem::Owned(_) => None,
        }
    }
}

/// A loaded model.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The model.
    pub model: Arc<Model>,
    /// Its device.
    pub device: u32,
    /// Work memory; the lock serialises executions of the model (they
    /// share it).
    pub work: Mutex<ModelMem>,
    /// The caller's work memory, if it is (first byte, bytes, where it
    /// must still be): known without taking the lock.
    pub user_work: Option<(usize, usize, Option<Expect>)>,
    /// Weight memory (holding the weights).
    pub weights: ModelMem,
    /// Bytes of the device's HBM charged for the memory the runtime owns
    /// (work and weights not given by the caller); given back on unload.
    charged: u64,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        if self.charged > 0 {
            state::memory().write().uncharge(self.device, self.charged);
        }
    }
}

/// Why a model's memory cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MemError {
    /// The host or the device's HBM cannot hold the memory the runtime
    /// allocates.
    OutOfMemory(String),
    /// The simulator's configuration is invalid.
    Config(String),
    /// The caller's weight memory is not (any more) live device memory.
    Weights(String),
}

/// `n` zero bytes, or `None` when the host cannot allocate them (instead of
/// aborting the process).
fn zeroed(n: usize) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, 0);
    Some(v)
}

/// Charges the memory a model loaded without the caller's memory needs (the
/// runtime allocates it on the device) to `device`'s HBM, after checking
/// that the host can back it: every size comes from the model file.
fn charge_runtime_memory(device: u32, bytes: u64) -> Result<(), MemError> {
    let oom = |why: String| {
        MemError::OutOfMemory(format!(
            "the model's work and weight memory ({bytes} bytes): {why}"
        ))
    };
    if let Some(available) = state::host_available()
        && bytes > available
    {
        return Err(oom(format!(
            "the host has {available} bytes available to back it"
        )));
    }
    let budget = crate::config::get()
        .map(|c| c.hbm_bytes)
        .map_err(|msg| MemError::Config(msg.to_string()))?;
    state::memory()
        .write()
        .charge(device, bytes, budget)
        .map_err(|e| oom(e.to_string()))
}

impl Loaded {
    /// Sets `model` up on `device`, with the caller's work and weight memory
    /// where given (device memory of `device`, large enough, not
    /// overlapping: the caller checked), else the runtime's. The weights are
    /// copied into the caller's weight memory.
    ///
    /// # Errors
    ///
    /// [`MemError`]: memory the runtime cannot allocate, or the caller's
    /// weight memory gone.
    pub(crate) fn new(
        model: Model,
        device: u32,
        user_work: Option<(usize, usize, Option<Expect>)>,
        user_weights: Option<(usize, usize, Option<Expect>)>,
    ) -> Result<Loaded, MemError> {
        let owned = [
            (user_work.is_none(), model.work_size),
            (user_weights.is_none(), model.weights.len()),
        ]
        .iter()
        .filter(|(runtime_owned, _)| *runtime_owned)
        .fold(0u64, |sum, &(_, n)| sum.saturating_add(n as u64));
        let weights = match user_weights {
            Some((addr, size, at)) => {
                if !model.weights.is_empty() {
                    let table = state::memory().read();
                    table
                        .check_range(addr, model.weights.len())
                        .map_err(MemError::Weights)?;
                    // SAFETY: a live device range of at least `weights.len()`
                    // bytes (checked under the read lock, held while writing);
                    // the weights are a separate host vector.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            model.weights.as_ptr(),
                            addr as *mut u8,
                            model.weights.len(),
                        );
                    }
                    drop(table);
                }
                ModelMem::User { addr, size, at }
            }
            None => ModelMem::Owned(model.weights.clone()),
        };
        // Charged once nothing above can fail; given back if the work memory
        // cannot be allocated, else when the model is unloaded.
        if owned > 0 {
            charge_runtime_memory(device, owned)?;
        }
        let work = match user_work {
            Some((addr, size, at)) => ModelMem::User { addr, size, at },
            None => match zeroed(model.work_size) {
                Some(v) => ModelMem::Owned(v),
                None => {
                    state::memory().write().uncharge(device, owned);
                    return Err(MemError::OutOfMemory(format!(
                        "the host cannot allocate the model's {} bytes of work memory",
                        model.work_size
                    )));
                }
            },
        };
        Ok(Loaded {
            model: Arc::new(model),
            device,
            work: Mutex::new(work),
            user_work,
            weights,
            charged: owned,
        })
    }

    /// Runs the model at gear `gear` on the device memory at `inputs`,
    /// writing `outputs`.
    ///
    /// # Errors
    ///
    /// Why a node failed (a value-dependent check).
    ///
    /// # Safety
    ///
    /// The inputs and outputs are live device ranges of at least their
    /// tensors' sizes at this gear, kept live by the caller (who holds the
    /// allocation table's read lock); outputs do not overlap each other nor
    /// the work and weight memory; the caller's work memory, if any, is
    /// live.
    pub(crate) unsafe fn run(
        &self,
        gear: usize,
        inputs: Vec<usize>,
        outputs: Vec<usize>,
    ) -> Result<(), String> {
        let mut work = self.work.lock();
        let work_addr = match &mut *work {
            ModelMem::Owned(v) => v.as_mut_ptr() as usize,
            ModelMem::User { addr, .. } => *addr,
        };
        let weights = match &self.weights {
            ModelMem::Owned(v) => v.as_ptr() as usize,
            ModelMem::User { addr, .. } => *addr,
        };
        let mem = Memory {
            inputs,
            outputs,
            work: work_addr,
            weights,
        };
        // SAFETY: the caller's contract for the inputs and outputs; the work
        // memory is the model's own (held exclusively by the lock above) or
        // the caller's, live and of at least `work_size` bytes; the weight
        // memory holds the weights and is only read.
        let r = unsafe { execute(&self.model, Gear(gear), &mem) };
        drop(work);
        r
    }
}

#[derive(Default)]
struct Models {
    next: u32,
    live: HashMap<u32, Arc<Loaded>>,
}

static MODELS: LazyLock<Mutex<Models>> = LazyLock::new(Default::default);

/// Registers `l`; returns its id (the lowest free one after the last given,
/// from 1).
pub(crate) fn insert(l: Loaded) -> u32 {
    let mut models = MODELS.lock();
    let mut id = models.next.wrapping_add(1).max(1);
    while models.live.contains_key(&id) {
        id = id.wrapping_add(1).max(1);
    }
    models.next = id;
    models.live.insert(id, Arc::new(l));
    id
}

/// The loaded model `id`.
pub(crate) fn get(id: u32) -> Option<Arc<Loaded>> {
    MODELS.lock().live.get(&id).cloned()
}

/// Unloads model `id` (executions already queued hold it); whether it was
/// loaded.
pub(crate) fn remove(id: u32) -> bool {
    MODELS.lock().live.remove(&id).is_some()
}

//! Conditional tasks of captured models: condition handles
//! (`aclmdlRICondHandleCreate`, `aclmdlRICondHandleGetCondPtr`) and the
//! conditional task (`aclmdlRIAddCondTask`) whose sub-models a capture fills
//! (`aclmdlRICaptureToModelRIBegin`, [`super::capture::begin_into`]).
//!
//! The rules follow hicann/runtime (`src/runtime/feature/aclgraph/cond_handle.cc`,
//! `v100/api_impl_aclgraph.cc`, `api_error_aclgraph.cc`,
//! `src/runtime/core/src/task/task_info/cond_op/aclgraph_cond_task.cc`,
//! `src/runtime/core/src/task/stars_cond_isa_helper.cc`;
//! `docs/zh/api_ref/15_model_running_instance__management.md`,
//! `docs/zh/design/features/aclgraph.md`):
//!
//! - A handle is made on a model whose capture is active; it owns 8 bytes
//!   of device memory, zeroed (`CondHandle::Setup`: `DevMemAlloc`,
//!   `MemSetSync`), freed with the model. With
//!   `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT` every execution of the root
//!   model first writes the default value there
//!   (`CondHandle::InitCondTaskByDefValue`); with 0 the program manages it.
//! - A conditional task is added once per handle, on a stream capturing
//!   into the handle's model; it makes `size` empty sub-models (IF: 1 or 2,
//!   WHILE: 1, SWITCH: at least 1; `CheckCondTaskParamsSize`), which other
//!   streams then capture into. The parent's capture ends only when every
//!   sub-model is captured (107046).
//! - At run time the task reads the 64-bit value (`ConstructIfCondSetupBranch`
//!   and siblings): IF runs sub-model 0 when it is not 0, else sub-model 1
//!   when there is one; WHILE runs sub-model 0 as long as it is not 0,
//!   reading it again after each run (`ConstructCaptureConditionJumpBackFc`);
//!   SWITCH runs the sub-model it indexes and nothing when it is not below
//!   the number of sub-models.
//!
//! The simulator runs a conditional task as one task of the executing
//! stream: it reads the value and runs the chosen sub-model's copies, fills
//! and operators in order, with every range any branch may touch validated
//! first (as a built model's program, [`crate::model::build`]).

use super::capture::Model;
use super::error::{Error, ErrorKind};
use super::handles::{Lookup, Table};
use super::stream::{Expect, Stream, TaskKind, TaskRange};
use crate::check::Use;
use crate::model::build::Inst;
use crate::state::{self, MemKind};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg)
}

/// The kind of a conditional task (`aclmdlRICondTaskType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondType {
    /// `ACL_MODEL_RI_COND_TYPE_IF`.
    If,
    /// `ACL_MODEL_RI_COND_TYPE_WHILE`.
    While,
    /// `ACL_MODEL_RI_COND_TYPE_SWITCH`.
    Switch,
}

impl CondType {
    /// The type of a runtime value, `None` beyond SWITCH (2).
    pub fn from_raw(v: u32) -> Option<CondType> {
        match v {
            0 => Some(CondType::If),
            1 => Some(CondType::While),
            2 => Some(CondType::Switch),
            _ => None,
        }
    }

    /// Checks the number of sub-models (`aclgraph_cond_task.cc`
    /// `CheckCondTaskParamsSize`).
    ///
    /// # Errors
    ///
    /// 107000 naming what the type takes.
    pub fn check_size(self, size: u32) -> Result<(), Error> {
        let (ok, want) = match self {
            CondType::If => (size == 1 || size == 2, "1 or 2"),
            CondType::While => (size == 1, "1"),
            CondType::Switch => (size > 0, "greater than 0"),
        };
        if ok {
            return Ok(());
        }
        Err(err(
            ErrorKind::ParamInvalid,
            format!("params.size {size} is invalid for a {self:?} task; expected {want}"),
        ))
    }
}

/// A condition handle (`aclmdlRICondHandle`).
pub struct CondHandle {
    /// The model it was created on.
    model: Weak<Model>,
    /// `defaultLaunchValue`.
    default: u32,
    /// `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`.
    assign_default: bool,
    /// The 8 bytes of device memory holding the value.
    addr: usize,
    at: Expect,
    /// The conditional task added with it: its type and sub-models.
    task: Mutex<Option<(CondType, Vec<Arc<Model>>)>>,
    /// Its memory was freed (its model was destroyed).
    released: AtomicBool,
}

/// Live condition handles.
pub static HANDLES: Table<CondHandle> = Table::new(Default::default);

/// Looks a condition handle up.
pub fn lookup(addr: usize) -> Lookup<CondHandle> {
    HANDLES.lock().get(addr)
}

/// `aclmdlRICondHandleCreate` on `m` (its capture active, checked by the
/// caller), on `device` with `hbm_budget` bytes of HBM.
///
/// # Errors
///
/// 207001 when the device has no 8 bytes left.
pub fn create(
    m: &Arc<Model>,
    device: u32,
    hbm_budget: u64,
    default: u32,
    assign_default: bool,
) -> Result<Arc<CondHandle>, Error> {
    let (addr, at) = {
        let mut table = state::memory().write();
        let p = table
            .alloc(MemKind::Device(device), 8, 8, hbm_budget)
            .map_err(|e| err(ErrorKind::ResourceAllocFail, e.to_string()))?;
        let addr = p as usize;
        let at = table.check_range(addr, 8).ok().and_then(Expect::of);
        // SAFETY: 8 bytes just allocated, known to nobody else yet.
        unsafe { std::ptr::write_bytes(p, 0, 8) };
        (addr, at)
    };
    let Some(at) = at else {
        return Err(err(
            ErrorKind::Internal,
            "the condition value's memory is not in the allocation table",
        ));
    };
    if crate::check::enabled() {
        // Zeroed by the runtime (`MemSetSync`): initialised.
        let _ = crate::check::host_access(
            "aclmdlRICondHandleCreate",
            &[crate::check::Access::new("cond", addr, 8, Use::Write)],
        );
    }
    let h = Arc::new(CondHandle {
        model: Arc::downgrade(m),
        default,
        assign_default,
        addr,
        at,
        task: Mutex::new(None),
        released: AtomicBool::new(false),
    });
    HANDLES.lock().insert(h.clone());
    m.push_cond_handle(h.clone());
    Ok(h)
}

impl CondHandle {
    /// Its handle.
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// `aclmdlRICondHandleGetCondPtr`: the device address of its value.
    pub fn ptr(&self) -> usize {
        self.addr
    }

    /// Whether a conditional task was added with it already.
    pub fn used(&self) -> bool {
        self.task.lock().is_some()
    }

    /// The model it was created on, while that model lives.
    pub fn model(&self) -> Option<Arc<Model>> {
        self.model.upgrade()
    }

    /// `aclmdlRIAddCondTask` on `s`, capturing into `parent` (the caller
    /// checked that `parent` is this handle's model): makes its sub-models
    /// and records the task.
    ///
    /// # Errors
    ///
    /// 107000 for a handle used already, or a size the type does not take
    /// (`CheckCondTaskParamsSize`); as the capture's task-group rule.
    pub fn add_task(
        self: &Arc<Self>,
        parent: &Arc<Model>,
        s: &Stream,
        ty: CondType,
        size: u32,
    ) -> Result<Vec<Arc<Model>>, Error> {
        ty.check_size(size)?;
        let mut task = self.task.lock();
        if task.is_some() {
            return Err(used_error());
        }
        let subs = super::capture::new_sub_models(parent, size as usize);
        parent.record_cond(s, self.clone())?;
        *task = Some((ty, subs.clone()));
        Ok(subs)
    }

    /// Its sub-models (none before its task is added).
    pub fn sub_models(&self) -> Vec<Arc<Model>> {
        self.task
            .lock()
            .as_ref()
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }

    /// The task that writes its default value at the start of an
    /// execution, when it has one.
    pub(crate) fn default_task(&self) -> Option<TaskKind> {
        if !self.assign_default || self.released.load(Ordering::Acquire) {
            return None;
        }
        Some(TaskKind::Upload {
            api: "aclmdlRIExecuteAsync",
            dst: self.addr,
            data: u64::from(self.default).to_ne_bytes().to_vec(),
            dst_at: self.at,
        })
    }

    /// Its conditional task as a program over the sub-models' steps now.
    pub(crate) fn program(&self) -> Arc<Branches> {
        let (ty, arms) = match &*self.task.lock() {
            Some((ty, subs)) => (*ty, subs.iter().map(|m| m.nodes()).collect()),
            None => (CondType::If, Vec::new()),
        };
        Arc::new(Branches {
            addr: self.addr,
            at: self.at,
            ty,
            arms,
        })
    }

    /// The task an execution queues for its conditional task: it reads the
    /// value and runs the chosen sub-model.
    pub(crate) fn task(&self) -> TaskKind {
        let program = self.program();
        let mut ranges = Vec::new();
        program.ranges(&mut ranges);
        TaskKind::Op {
            api: "aclmdlRIAddCondTask",
            ranges,
            kernel: Arc::new(move || {
                let mut jumps = 0;
                program.run(&mut jumps)
            }),
        }
    }

    /// Its model is destroyed: frees its memory, unregisters it, and hands
    /// back its sub-models (destroyed with it, `CondHandle::~CondHandle`).
    pub(crate) fn release(self: &Arc<Self>) -> Vec<Arc<Model>> {
        if !self.released.swap(true, Ordering::AcqRel) {
            let _ = state::memory().write().free(self.addr, true);
        }
        HANDLES.lock().remove(self.handle());
        self.task
            .lock()
            .take()
            .map(|(_, subs)| subs)
            .unwrap_or_default()
    }
}

fn used_error() -> Error {
    err(
        ErrorKind::ParamInvalid,
        "params.handle was used by a conditional task already; create a new handle before \
         adding another conditional task",
    )
}

/// One step of a sub-model's program.
pub(crate) enum Node {
    /// A copy, upload, fill or operator, and the ranges it touches.
    Task(Inst, Vec<TaskRange>),
    /// A conditional task of the sub-model.
    Cond(Arc<Branches>),
}

impl Node {
    /// The step of a captured task: copies, uploads, fills and operators
    /// (the only tasks a capture keeps as data).
    pub(crate) fn of_task(t: &TaskKind) -> Option<Node> {
        let ranges = crate::model::build::task_ranges(t);
        Inst::of(t).map(|i| Node::Task(i, ranges))
    }
}

/// A conditional task frozen for one execution.
pub(crate) struct Branches {
    addr: usize,
    at: Expect,
    ty: CondType,
    /// Per sub-model, its steps.
    arms: Vec<Vec<Node>>,
}

impl Branches {
    /// Every range a run may touch: the value, and each branch's tasks.
    fn ranges(&self, out: &mut Vec<TaskRange>) {
        out.push(TaskRange {
            what: "condition value",
            addr: self.addr,
            len: 8,
            at: self.at,
            how: Use::Read,
        });
        for node in self.arms.iter().flatten() {
            match node {
                Node::Task(_, r) => out.extend(r.iter().cloned()),
                Node::Cond(b) => b.ranges(out),
            }
        }
    }

    /// The value now. Called inside the task, whose ranges (the value's 8
    /// bytes among them) were validated and are kept alive by the read lock
    /// its worker holds.
    fn value(&self) -> u64 {
        // SAFETY: see above: 8 bytes of a live allocation.
        unsafe { std::ptr::read_unaligned(self.addr as *const u64) }
    }

    fn run(&self, jumps: &mut u64) -> Result<(), Error> {
        match self.ty {
            CondType::If => {
                let v = self.value();
                let arm = if v != 0 { 0 } else { 1 };
                match self.arms.get(arm) {
                    Some(a) => run_arm(a, jumps),
                    None => Ok(()),
                }
            }
            CondType::While => {
                let Some(body) = self.arms.first() else {
                    return Ok(());
                };
                while self.value() != 0 {
                    *jumps += 1;
                    if *jumps > crate::model::build::MAX_JUMPS {
                        return Err(err(
                            ErrorKind::ModelFault,
                            format!(
                                "a WHILE conditional task ran its body {} times in one \
                                 execution; does the body ever write 0 to the condition value?",
                                crate::model::build::MAX_JUMPS
                            ),
                        ));
                    }
                    run_arm(body, jumps)?;
                }
                Ok(())
            }
            CondType::Switch => {
                let v = self.value();
                match usize::try_from(v).ok().and_then(|i| self.arms.get(i)) {
                    Some(a) => run_arm(a, jumps),
                    None => Ok(()),
                }
            }
        }
    }
}

fn run_arm(arm: &[Node], jumps: &mut u64) -> Result<(), Error> {
    for node in arm {
        match node {
            Node::Task(t, _) => crate::model::build::run_task(t)?,
            Node::Cond(b) => b.run(jumps)?,
        }
    }
    Ok(())
}

/// A task that does nothing.
pub(crate) fn nothing() -> TaskKind {
    TaskKind::Op {
        api: "aclmdlRIExecuteAsync",
        ranges: Vec::new(),
        kernel: Arc::new(|| Ok(())),
    }
}

//! Communicators: one rank's view of a group, and the table of handles.

use super::error::{ErrorKind, Fail};
use super::local::Mapping;
use super::transport::Transport;
use crate::rt::handles::{self, Lookup, Registry, Table};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a communicator's config asks for (the options the simulator reads;
/// the HCCL exports read them from an `HcclCommConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    /// `hcclBufferSize` in MB, when set.
    pub buffer_mib: Option<u32>,
    /// `hcclDeterministic`, when set.
    pub deterministic: Option<u32>,
    /// `hcclCommName`, when not empty.
    pub name: Option<String>,
    /// `hcclExecTimeOut` in seconds, when set (a value the SoC does not
    /// accept is ignored when the communicator is made; see [`super::env`]).
    pub exec_timeout_s: Option<i32>,
    /// `hcclOpExpansionMode` is 3 (AIV) or 4 (AIV only).
    pub aiv: bool,
}

/// One rank's communicator.
#[derive(Debug)]
pub struct Comm {
    /// The communicator's id, the same on every rank.
    pub uid: u64,
    /// This rank.
    pub rank: u32,
    /// Ranks in the communicator.
    pub nranks: u32,
    /// The (logical) device this rank runs on.
    pub device: u32,
    /// `HcclGetCommName`.
    pub name: String,
    /// The connections (shared with sub-communicators).
    pub transport: Arc<Transport>,
    /// Mesh rank of each communicator rank.
    pub members: Vec<u32>,
    /// How long a collective waits for a peer (`None`: forever).
    pub exec_timeout: Option<Duration>,
    /// The options it was created with.
    pub options: Options,
    seq: AtomicU64,
    p2p: Mutex<(Vec<u64>, Vec<u64>)>,
    sub_comms: AtomicU64,
    error: Mutex<Option<Fail>>,
    /// Between `HcclCommSuspend` and `HcclCommResume`.
    pub suspended: AtomicBool,
    /// Peers' device memory files mapped here by the direct collectives,
    /// by (process, inode); those the last collective did not use are
    /// unmapped after it.
    pub maps: Mutex<HashMap<(u32, u64), Arc<Mapping>>>,
    /// `HcclSetCommConfig(HCCL_DETERMINISTIC)`: 0 or 1.
    pub deterministic: AtomicI32,
    /// `HcclSetCommConfig(HCCL_ACCELERATOR)` (only the default, 0, runs here).
    pub accelerator: AtomicI32,
    /// Memory registered with `HcclCommRegister`, by handle.
    pub windows: Mutex<HashMap<u64, Window>>,
    /// Per peer, the number of `HcclCommExchangeMem` calls with it so far.
    exchanges: Mutex<Vec<u64>>,
    /// Virtual memory given to the communicator (`HcclCommSetMemoryRange`)
    /// and the mapped parts of it activated (`HcclCommActivateCommMemory`).
    pub vm: Mutex<VmRanges>,
    /// Host-side calls running on it now (see [`InUse`]).
    busy: AtomicU32,
}

/// Marks a communicator in use while a host-side call runs on it (HCCL's
/// `HcclCommState::INUSE`); `HcclCommDestroy` refuses it meanwhile.
#[derive(Debug)]
pub struct InUse(Arc<Comm>);

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// See [`Comm::vm`].
#[derive(Debug, Default)]
pub struct VmRanges {
    /// Ranges by first address: bytes.
    pub ranges: std::collections::BTreeMap<usize, usize>,
    /// Activated memory by first address: (bytes, physical handle).
    pub active: std::collections::BTreeMap<usize, (usize, u64)>,
}

/// A buffer registered with `HcclCommRegister`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// First address and bytes.
    pub addr: usize,
    /// Bytes.
    pub size: u64,
    /// The allocation it lay in when registered.
    pub alloc: u64,
    /// Peers' windows received by `HcclCommExchangeMem`: (rank, address, bytes).
    pub peers: Vec<(u32, u64, u64)>,
}

impl Comm {
    /// A communicator over `transport`.
    pub fn new(
        uid: u64,
        rank: u32,
        device: u32,
        transport: Arc<Transport>,
        members: Vec<u32>,
        options: Options,
    ) -> Comm {
        let deterministic = options
            .deterministic
            .map_or_else(super::settings::deterministic, |d| d as i32);
        let nranks = members.len() as u32;
        let name = options
            .name
            .clone()
            .unwrap_or_else(|| format!("hccl_comm_{uid:016x}"));
        Comm {
            uid,
            rank,
            nranks,
            device,
            name,
            transport,
            members,
            exec_timeout: super::env::current().exec_timeout(
                options.exec_timeout_s,
                options.aiv,
                super::env::SocRules::simulated(),
            ),
            options,
            seq: AtomicU64::new(0),
            p2p: Mutex::new((vec![0; nranks as usize], vec![0; nranks as usize])),
            sub_comms: AtomicU64::new(0),
            error: Mutex::new(None),
            suspended: AtomicBool::new(false),
            maps: Mutex::new(HashMap::new()),
            deterministic: AtomicI32::new(deterministic),
            accelerator: AtomicI32::new(0),
            windows: Mutex::new(HashMap::new()),
            exchanges: Mutex::new(vec![0; nranks as usize]),
            vm: Mutex::new(VmRanges::default()),
            busy: AtomicU32::new(0),
        }
    }

    /// Marks the communicator in use until the guard drops.
    pub fn enter(self: &Arc<Self>) -> InUse {
        self.busy.fetch_add(1, Ordering::AcqRel);
        InUse(self.clone())
    }

    /// Whether a host-side call is running on the communicator.
    pub fn in_use(&self) -> bool {
        self.busy.load(Ordering::Acquire) > 0
    }

    /// The number of the next collective (from 1), in call order.
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The number of the next send to (`send`) or receive from `peer`.
    pub fn next_p2p(&self, peer: u32, send: bool) -> u64 {
        let mut p = self.p2p.lock();
        let v = if send { &mut p.0 } else { &mut p.1 };
        v[peer as usize] += 1;
        v[peer as usize]
    }

    /// The number the next `HcclCommExchangeMem` with `peer` will have
    /// (from 1); [`Comm::exchanged`] counts it once its frame is sent.
    pub fn next_exchange(&self, peer: u32) -> u64 {
        self.exchanges.lock()[peer as usize] + 1
    }

    /// Counts an exchange frame sent to `peer`.
    pub fn exchanged(&self, peer: u32) {
        self.exchanges.lock()[peer as usize] += 1;
    }

    /// A new sub-communicator number (for messages).
    pub fn next_sub(&self) -> u64 {
        self.sub_comms.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The mesh rank of communicator rank `r`.
    pub fn mesh(&self, r: u32) -> u32 {
        self.members[r as usize]
    }

    /// Whether this rank is linked directly to every other rank of the
    /// communicator (same host, direct links on; see [`super::local`]).
    pub fn directly_linked(&self) -> bool {
        self.members.iter().all(|&m| {
            self.transport
                .links
                .get(m as usize)
                .is_some_and(Option::is_some)
        })
    }

    /// The process of communicator rank `r`, when linked directly.
    pub fn pid(&self, r: u32) -> Option<u32> {
        self.transport
            .links
            .get(self.mesh(r) as usize)
            .copied()
            .flatten()
    }

    /// The deadline of one wait started now.
    pub fn deadline(&self) -> Option<Instant> {
        self.exec_timeout.map(|t| Instant::now() + t)
    }

    /// Records that collective `seq` failed here; tells the other ranks
    /// unless the failure came from one of them.
    pub fn fail(&self, seq: u64, f: &Fail) {
        {
            let mut e = self.error.lock();
            if e.is_none() {
                *e = Some(f.clone());
            }
        }
        if !f.remote {
            self.transport
                .broadcast_abort(self.uid, &self.members, seq, f);
        }
    }

    /// The timeout a collective of this communicator already failed with
    /// here, if any: the later ones are not run (see `algo::run`).
    pub fn timed_out(&self) -> Option<Fail> {
        self.error
            .lock()
            .clone()
            .filter(|f| f.kind == ErrorKind::Timeout)
    }

    /// `HcclGetCommAsyncError`: only what HCCL reports there (hicann/hcomm
    /// `docs/en/api_ref/comm_mgr_c/HcclGetCommAsyncError.md`: "RDMA ERROR
    /// CQE" errors, `HCCL_E_REMOTE`) and operations that differ between
    /// ranks (`HCCL_E_PARA`): a peer that failed, aborted or is gone, or a
    /// mismatched collective. A timeout, a memory fault or an internal error
    /// of this rank's queued work is not reported here: it surfaces at the
    /// stream's synchronisation (507048, 507013), as on hardware.
    pub fn async_error(&self) -> Option<Fail> {
        let reported = |f: &Fail| matches!(f.kind, ErrorKind::Remote | ErrorKind::Para);
        if let Some(f) = self.error.lock().clone().filter(reported) {
            return Some(f);
        }
        if let Some(a) = self.transport.abort_of(self.uid)
            && a.kind != ErrorKind::Timeout
        {
            let kind = if a.kind == ErrorKind::Para {
                ErrorKind::Para
            } else {
                ErrorKind::Remote
            };
            return Some(Fail {
                kind,
                msg: format!("rank {} reported a failure: {}", a.from, a.msg),
                memory: false,
                remote: true,
            });
        }
        self.transport.dead(&self.members)
    }
}

/// A handle given to C: the communicator until `HcclCommDestroy` takes it.
/// (Destroyed handles stay in the table's graveyard; they must not keep the
/// connections open.)
#[derive(Debug, Default)]
pub struct Handle {
    /// The communicator, `None` once destroyed.
    pub comm: Mutex<Option<Arc<Comm>>>,
}

/// Live communicators.
pub static COMMS: Table<Handle> = Table::new(|| Mutex::new(Registry::default()));

/// Registers `comm`; returns its handle (the address C code is given).
pub fn register(comm: Comm) -> usize {
    let h = Arc::new(Handle {
        comm: Mutex::new(Some(Arc::new(comm))),
    });
    COMMS.lock().insert(h)
}

/// The communicator of handle `h`.
///
/// # Errors
///
/// [`ErrorKind::Para`] for a destroyed or unknown handle.
pub fn find(h: usize) -> Result<Arc<Comm>, Fail> {
    let found = COMMS.lock().get(h);
    match found {
        Lookup::Live(handle) => match handle.comm.lock().clone() {
            Some(c) => Ok(c),
            None => Err(Fail::new(
                ErrorKind::Para,
                format!("communicator {h:#x} has been destroyed"),
            )),
        },
        bad => Err(Fail::new(
            ErrorKind::Para,
            handles::describe_bad("communicator", h, &bad),
        )),
    }
}

/// Unregisters a communicator; its connections close when the last queued
/// collective that uses it is done.
///
/// # Errors
///
/// As [`find`]; [`ErrorKind::Again`] while another thread is inside a call
/// on it (hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
/// `HcclCommDestroy`: "comm is in use, please try again later").
pub fn destroy(h: usize) -> Result<(), Fail> {
    let c = find(h)?;
    if c.in_use() {
        return Err(Fail::new(
            ErrorKind::Again,
            format!(
                "communicator {h:#x} is in use by a call on another thread (comm is in use,                  please try again later); destroy it once that call has returned"
            ),
        ));
    }
    drop(c);
    let removed = COMMS.lock().remove(h);
    if let Some(handle) = removed {
        let comm = handle.comm.lock().take();
        drop(comm);
    }
    Ok(())
}

/// Live communicators of this process (for tests and stats).
pub fn live() -> usize {
    COMMS.lock().all().len()
}

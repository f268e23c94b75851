//! The collectives as they run on a stream worker.
//!
//! Every collective starts with a *signature exchange*: each rank sends every
//! other rank what it was called with (operation, type, counts, op, root)
//! and checks what it receives. Ranks that called something else, or in
//! another order, are found here — on every rank, since every rank sees
//! every signature — and the collective fails with `HCCL_E_PARA` before any
//! data moves. A rank that never calls it makes the others time out
//! (`HCCL_E_TIMEOUT`). Each signature also carries where the rank's buffers
//! are and whether it is linked directly to every other rank; when all are
//! (one host), the collective runs as in [`super::direct`]. Otherwise, over
//! the TCP mesh (data moves in pieces of at most 4 MiB, so that receiving,
//! reducing and forwarding overlap):
//!
//! | collective | algorithm |
//! |---|---|
//! | all-reduce | ring: reduce-scatter, then all-gather (2(n−1) steps) |
//! | reduce-scatter(-v) | ring reduce-scatter (n−1 steps) |
//! | all-gather(-v) | ring (n−1 steps) |
//! | broadcast | chain from the root along the ring, pipelined |
//! | reduce | chain along the ring ending at the root, pipelined |
//! | scatter | direct: the root sends each rank its block |
//! | all-to-all(-v, -vc) | direct: every pair exchanges its blocks |
//! | send / recv, batches | direct, with a rendezvous (the receiver says it is ready); on one host the receiver copies straight from the sender's buffer and says when it is done |
//! | barrier | the signature exchange alone |

use super::communicator::Comm;
use super::direct::Ext;
use super::error::{ErrorKind, Fail};
use super::mem::Mem;
use super::reduce::{DataType, ReduceOp};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Bytes per frame of bulk data.
pub const PIECE: usize = 4 << 20;

/// Peers' memory files a communicator keeps mapped across send/recv batches.
const MAX_P2P_MAPS: usize = 64;

/// Tag bit of point-to-point traffic (collectives use their sequence number).
const P2P: u64 = 1 << 62;

fn pieces(len: usize) -> Vec<(usize, usize)> {
    pieces_of(len, PIECE).collect()
}

/// Splits `len` bytes into pieces of at most `piece` (offset, length).
pub(super) fn pieces_of(len: usize, piece: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len.div_ceil(piece)).map(move |k| (k * piece, piece.min(len - k * piece)))
}

/// A collective and its arguments, validated at the call.
#[derive(Debug, Clone)]
pub enum Coll {
    /// `HcclAllReduce`.
    AllReduce {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
        /// The reduction.
        op: ReduceOp,
    },
    /// `HcclBroadcast`.
    Broadcast {
        /// The buffer: sent by the root, received by the others.
        buf: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
        /// The root rank.
        root: u32,
    },
    /// `HcclReduce`.
    Reduce {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
        /// The reduction.
        op: ReduceOp,
        /// The root rank.
        root: u32,
    },
    /// `HcclAllGather` (`count` per rank).
    AllGather {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
    },
    /// `HcclAllGatherV`.
    AllGatherV {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements per rank.
        counts: Vec<u64>,
        /// Offsets per rank, in elements.
        displs: Vec<u64>,
        /// The element type.
        dt: DataType,
    },
    /// `HcclReduceScatter` (`count` per rank).
    ReduceScatter {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
        /// The reduction.
        op: ReduceOp,
    },
    /// `HcclReduceScatterV`.
    ReduceScatterV {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements per rank.
        counts: Vec<u64>,
        /// Offsets per rank, in elements.
        displs: Vec<u64>,
        /// The element type.
        dt: DataType,
        /// The reduction.
        op: ReduceOp,
    },
    /// `HcclScatter` (`count` per rank).
    Scatter {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements.
        count: u64,
        /// The element type.
        dt: DataType,
        /// The root rank.
        root: u32,
    },
    /// `HcclAlltoAll` (`send_count` to each rank, `recv_count` from each).
    AlltoAll {
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements sent to each rank.
        send_count: u64,
        /// Elements received from each rank.
        recv_count: u64,
        /// The element type.
        dt: DataType,
    },
    /// `HcclAlltoAllV` and `HcclAlltoAllVC` (counts and displacements per rank).
    AlltoAllV {
        /// Which C function.
        vc: bool,
        /// The send buffer.
        send: Mem,
        /// The receive buffer.
        recv: Mem,
        /// Elements sent to each rank.
        send_counts: Vec<u64>,
        /// Offsets of what goes to each rank, in elements.
        sdispls: Vec<u64>,
        /// Elements received from each rank.
        recv_counts: Vec<u64>,
        /// Offsets of what comes from each rank, in elements.
        rdispls: Vec<u64>,
        /// The element type.
        dt: DataType,
        /// A fingerprint of the VC matrix (the same on every rank).
        matrix: u64,
    },
    /// `HcclBarrier`.
    Barrier,
}

impl Coll {
    /// The buffers this rank's part reads and writes, for the check mode:
    /// send buffers are read, receive buffers written; a broadcast buffer
    /// is read on the root and written elsewhere.
    pub(crate) fn accesses(&self, rank: u32) -> Vec<crate::check::Access> {
        use crate::check::{Access, Use};
        let read = |m: &Mem| Access::new(m.role, m.addr, m.len, Use::Read);
        let write = |m: &Mem| Access::new(m.role, m.addr, m.len, Use::Write);
        let v = match self {
            Coll::AllReduce { send, recv, .. }
            | Coll::Reduce { send, recv, .. }
            | Coll::AllGather { send, recv, .. }
            | Coll::AllGatherV { send, recv, .. }
            | Coll::ReduceScatter { send, recv, .. }
            | Coll::ReduceScatterV { send, recv, .. }
            | Coll::Scatter { send, recv, .. }
            | Coll::AlltoAll { send, recv, .. }
            | Coll::AlltoAllV { send, recv, .. } => vec![read(send), write(recv)],
            Coll::Broadcast { buf, root, .. } if *root == rank => vec![read(buf)],
            Coll::Broadcast { buf, .. } => vec![write(buf)],
            Coll::Barrier => Vec::new(),
        };
        v.into_iter().filter(|a| a.len > 0).collect()
    }
}

impl P2p {
    /// The buffer it reads (a send) or writes (a receive), for the check
    /// mode.
    pub(crate) fn access(&self) -> crate::check::Access {
        use crate::check::{Access, Use};
        let how = if self.send { Use::Read } else { Use::Write };
        Access::new(self.buf.role, self.buf.addr, self.buf.len, how)
    }
}

/// What a rank was called with, as exchanged. `a` is what this rank sends
/// to the peer, `b` what it expects from it (equal for symmetric
/// collectives), so that two signatures match when crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sig {
    kind: u32,
    dt: u32,
    op: u32,
    root: u32,
    a: u64,
    b: u64,
    extra: u64,
}

const NONE: u32 = u32::MAX;

/// Bytes of a signature on the wire.
const SIG: usize = 40;

impl Sig {
    fn bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(SIG);
        for x in [self.kind, self.dt, self.op, self.root] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        for x in [self.a, self.b, self.extra] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v
    }

    fn parse(b: &[u8]) -> Option<Sig> {
        if b.len() != SIG {
            return None;
        }
        let w = |i: usize| super::wire::u32_at(b, i);
        let q = |i: usize| super::wire::u64_at(b, i);
        Some(Sig {
            kind: w(0),
            dt: w(4),
            op: w(8),
            root: w(12),
            a: q(16),
            b: q(24),
            extra: q(32),
        })
    }

    fn matches(&self, theirs: &Sig) -> bool {
        self.kind == theirs.kind
            && self.dt == theirs.dt
            && self.op == theirs.op
            && self.root == theirs.root
            && self.extra == theirs.extra
            && self.a == theirs.b
            && self.b == theirs.a
    }

    /// How it reads in a message, e.g. `HcclAllReduce(count 8, fp32, sum)`.
    fn describe(&self) -> String {
        let kind = Kind::from_wire(self.kind);
        let name = kind.map_or("a collective", Kind::name);
        let mut parts = Vec::new();
        if kind == Some(Kind::Barrier) {
            return format!("{name}()");
        }
        if matches!(kind, Some(Kind::AlltoAllV | Kind::AlltoAll)) {
            parts.push(format!("sending {} and expecting {}", self.a, self.b));
        } else if self.extra != 0 {
            parts.push(format!("counts fingerprint {:#x}", self.extra));
        } else {
            parts.push(format!("count {}", self.a));
        }
        parts.push(type_name(self.dt));
        if self.op != NONE {
            parts.push(op_name(self.op));
        }
        if self.root != NONE {
            parts.push(format!("root {}", self.root));
        }
        format!("{name}({})", parts.join(", "))
    }
}

/// The collectives, as signatures name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    AllGatherV,
    ReduceScatter,
    ReduceScatterV,
    Scatter,
    AlltoAll,
    AlltoAllV,
    AlltoAllVC,
    Barrier,
}

impl Kind {
    const ALL: [Kind; 12] = [
        Kind::AllReduce,
        Kind::Broadcast,
        Kind::Reduce,
        Kind::AllGather,
        Kind::AllGatherV,
        Kind::ReduceScatter,
        Kind::ReduceScatterV,
        Kind::Scatter,
        Kind::AlltoAll,
        Kind::AlltoAllV,
        Kind::AlltoAllVC,
        Kind::Barrier,
    ];

    /// The function a user calls for it.
    fn name(self) -> &'static str {
        match self {
            Kind::AllReduce => "HcclAllReduce",
            Kind::Broadcast => "HcclBroadcast",
            Kind::Reduce => "HcclReduce",
            Kind::AllGather => "HcclAllGather",
            Kind::AllGatherV => "HcclAllGatherV",
            Kind::ReduceScatter => "HcclReduceScatter",
            Kind::ReduceScatterV => "HcclReduceScatterV",
            Kind::Scatter => "HcclScatter",
            Kind::AlltoAll => "HcclAlltoAll",
            Kind::AlltoAllV => "HcclAlltoAllV",
            Kind::AlltoAllVC => "HcclAlltoAllVC",
            Kind::Barrier => "HcclBarrier",
        }
    }

    /// Its number in signatures.
    fn to_wire(self) -> u32 {
        super::wire::number_of(&Self::ALL, &self)
    }

    /// The kind numbered `n` by [`Kind::to_wire`].
    fn from_wire(n: u32) -> Option<Kind> {
        super::wire::numbered(&Self::ALL, n)
    }
}

/// A type's name from its number in a signature.
fn type_name(dt: u32) -> String {
    DataType::from_wire(dt).map_or_else(|| format!("unknown data type {dt}"), |d| d.name().into())
}

/// An op's name from its number in a signature.
fn op_name(op: u32) -> String {
    ReduceOp::from_wire(op).map_or_else(|| format!("unknown reduce op {op}"), |o| o.name().into())
}

fn counts_fp(a: &[u64], b: &[u64]) -> u64 {
    let bytes: Vec<u8> = a.iter().chain(b).flat_map(|x| x.to_le_bytes()).collect();
    super::wire::fnv(&bytes) | 1
}

impl Coll {
    fn sig(&self, peer: usize) -> Sig {
        let s = |kind: Kind, dt: Option<DataType>, op: Option<ReduceOp>, root, a, b, extra| Sig {
            kind: kind.to_wire(),
            dt: dt.map_or(NONE, DataType::to_wire),
            op: op.map_or(NONE, ReduceOp::to_wire),
            root,
            a,
            b,
            extra,
        };
        match self {
            Coll::AllReduce { count, dt, op, .. } => s(
                Kind::AllReduce,
                Some(*dt),
                Some(*op),
                NONE,
                *count,
                *count,
                0,
            ),
            Coll::Broadcast {
                count, dt, root, ..
            } => s(Kind::Broadcast, Some(*dt), None, *root, *count, *count, 0),
            Coll::Reduce {
                count,
                dt,
                op,
                root,
                ..
            } => s(Kind::Reduce, Some(*dt), Some(*op), *root, *count, *count, 0),
            Coll::AllGather { count, dt, .. } => {
                s(Kind::AllGather, Some(*dt), None, NONE, *count, *count, 0)
            }
            Coll::AllGatherV {
                counts, displs, dt, ..
            } => s(
                Kind::AllGatherV,
                Some(*dt),
                None,
                NONE,
                0,
                0,
                counts_fp(counts, displs),
            ),
            Coll::ReduceScatter { count, dt, op, .. } => s(
                Kind::ReduceScatter,
                Some(*dt),
                Some(*op),
                NONE,
                *count,
                *count,
                0,
            ),
            Coll::ReduceScatterV {
                counts,
                displs,
                dt,
                op,
                ..
            } => s(
                Kind::ReduceScatterV,
                Some(*dt),
                Some(*op),
                NONE,
                0,
                0,
                counts_fp(counts, displs),
            ),
            Coll::Scatter {
                count, dt, root, ..
            } => s(Kind::Scatter, Some(*dt), None, *root, *count, *count, 0),
            Coll::AlltoAll {
                send_count,
                recv_count,
                dt,
                ..
            } => s(
                Kind::AlltoAll,
                Some(*dt),
                None,
                NONE,
                *send_count,
                *recv_count,
                0,
            ),
            Coll::AlltoAllV {
                vc,
                send_counts,
                recv_counts,
                dt,
                matrix,
                ..
            } => s(
                if *vc {
                    Kind::AlltoAllVC
                } else {
                    Kind::AlltoAllV
                },
                Some(*dt),
                None,
                NONE,
                send_counts[peer],
                recv_counts[peer],
                *matrix,
            ),
            Coll::Barrier => s(Kind::Barrier, None, None, NONE, 0, 0, 0),
        }
    }
}

impl Coll {
    /// Bytes per element.
    pub(super) fn elem_size(&self) -> usize {
        let dt = match self {
            Coll::AllReduce { dt, .. }
            | Coll::Broadcast { dt, .. }
            | Coll::Reduce { dt, .. }
            | Coll::AllGather { dt, .. }
            | Coll::AllGatherV { dt, .. }
            | Coll::ReduceScatter { dt, .. }
            | Coll::ReduceScatterV { dt, .. }
            | Coll::Scatter { dt, .. }
            | Coll::AlltoAll { dt, .. }
            | Coll::AlltoAllV { dt, .. } => *dt,
            Coll::Barrier => return 1,
        };
        dt.size()
    }

    /// The per-rank blocks, (offset, bytes), of the buffer the collective
    /// splits among `n` ranks: all-reduce's data, reduce-scatter's input,
    /// all-gather's output. Empty for the other collectives.
    pub(super) fn blocks(&self, n: u32) -> Vec<(usize, usize)> {
        let size = self.elem_size();
        match self {
            Coll::AllReduce { count, .. } => even_blocks(*count, n, size),
            Coll::ReduceScatter { count, .. } | Coll::AllGather { count, .. } => {
                let bytes = *count as usize * size;
                (0..n as usize).map(|c| (c * bytes, bytes)).collect()
            }
            Coll::ReduceScatterV { counts, displs, .. }
            | Coll::AllGatherV { counts, displs, .. } => v_blocks(counts, displs, size),
            _ => Vec::new(),
        }
    }

    /// Bytes of the one-count collectives' blocks: broadcast's buffer,
    /// reduce's input, each rank's part of scatter.
    pub(super) fn count_bytes(&self) -> usize {
        match self {
            Coll::Broadcast { count, .. }
            | Coll::Reduce { count, .. }
            | Coll::Scatter { count, .. } => *count as usize * self.elem_size(),
            _ => 0,
        }
    }

    /// All-to-all's send and receive blocks, (offset, bytes) per rank.
    #[allow(clippy::type_complexity)]
    pub(super) fn a2a_blocks(&self, n: u32) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
        let size = self.elem_size();
        let even = |count: u64| -> Vec<(usize, usize)> {
            let b = count as usize * size;
            (0..n as usize).map(|j| (j * b, b)).collect()
        };
        match self {
            Coll::AlltoAll {
                send_count,
                recv_count,
                ..
            } => (even(*send_count), even(*recv_count)),
            Coll::AlltoAllV {
                send_counts,
                sdispls,
                recv_counts,
                rdispls,
                ..
            } => (
                v_blocks(send_counts, sdispls, size),
                v_blocks(recv_counts, rdispls, size),
            ),
            _ => (Vec::new(), Vec::new()),
        }
    }
}

/// A running collective: the communicator, its frames' tag, the stop flag.
pub(super) struct Ctx<'a> {
    pub(super) c: &'a Comm,
    tag: u64,
    pub(super) seq: u64,
    pub(super) stop: &'a AtomicBool,
}

impl Ctx<'_> {
    pub(super) fn n(&self) -> u32 {
        self.c.nranks
    }

    pub(super) fn me(&self) -> u32 {
        self.c.rank
    }

    pub(super) fn send(&self, to: u32, data: &[u8]) -> Result<(), Fail> {
        self.c.transport.send_data(
            self.c.mesh(to),
            self.c.uid,
            self.tag,
            data,
            self.c.deadline(),
            self.stop,
        )
    }

    pub(super) fn recv(&self, from: u32) -> Result<Vec<u8>, Fail> {
        self.recv_any(&[from]).map(|(_, m)| m)
    }

    /// The first frame of this collective from any of the ranks `from`, and
    /// its sender.
    pub(super) fn recv_any(&self, from: &[u32]) -> Result<(u32, Vec<u8>), Fail> {
        let mesh: Vec<u32> = from.iter().map(|&r| self.c.mesh(r)).collect();
        self.c
            .transport
            .recv_any(
                self.c.uid,
                self.tag,
                self.seq,
                &mesh,
                &self.c.members,
                self.c.deadline(),
                self.stop,
            )
            .map(|(m, frame)| {
                let r = self.c.members.iter().position(|&x| x == m).unwrap_or(0) as u32;
                (r, frame)
            })
            .map_err(|mut f| {
                if f.kind == ErrorKind::Timeout {
                    let who = from
                        .iter()
                        .map(|&r| {
                            format!("rank {r} (at {})", self.c.transport.addr(self.c.mesh(r)))
                        })
                        .collect::<Vec<_>>()
                        .join(" or ");
                    f.msg = format!(
                        "rank {} waited for {who} longer than the exec timeout ({:?}) in \
                         collective #{}; it did not call it, or stalls",
                        self.me(),
                        self.c.exec_timeout.unwrap_or_default(),
                        self.seq
                    );
                }
                f
            })
    }

    pub(super) fn recv_len(&self, from: u32, len: usize) -> Result<Vec<u8>, Fail> {
        let v = self.recv(from)?;
        if v.len() != len {
            return Err(Fail::new(
                ErrorKind::Internal,
                format!(
                    "rank {from} sent {} bytes where {len} were expected (protocol error)",
                    v.len()
                ),
            ));
        }
        Ok(v)
    }

    /// Exchanges signatures, each followed by the rank's [`Ext`]; returns
    /// every rank's `Ext` (its own included) when all ranks are linked
    /// directly, so that the direct algorithms apply.
    fn exchange_signatures(&self, coll: &Coll) -> Result<Option<Vec<Ext>>, Fail> {
        let n = self.n();
        let me = self.me();
        let linked = self.c.directly_linked() && coll.direct_safe(me as usize, n);
        for j in (0..n).filter(|&j| j != me) {
            let mut msg = coll.sig(j as usize).bytes();
            msg.extend_from_slice(&coll.ext(j as usize, linked).bytes());
            self.send(j, &msg)?;
        }
        let mut first_bad: Option<String> = None;
        let mut exts = vec![coll.ext(me as usize, linked); n as usize];
        for j in (0..n).filter(|&j| j != me) {
            let got = self.recv(j)?;
            let mine = coll.sig(j as usize);
            let (sig, ext) = got.split_at(got.len().min(SIG));
            exts[j as usize] = Ext::parse(ext).ok_or_else(|| {
                Fail::new(
                    ErrorKind::Internal,
                    format!("rank {j} sent a malformed signature"),
                )
            })?;
            let theirs = Sig::parse(sig).ok_or_else(|| {
                Fail::new(
                    ErrorKind::Internal,
                    format!("rank {j} sent a malformed signature"),
                )
            })?;
            if !mine.matches(&theirs) && first_bad.is_none() {
                first_bad = Some(format!(
                    "collective #{} differs between ranks: rank {j} called {}, rank {me} (this \
                     rank) called {}; every rank must call the same collectives with the same \
                     count, type, op and root, in the same order (a cann-sim diagnostic: this \
                     exchange of every call's arguments is the simulator's; real HCCL may \
                     instead wait until HCCL_EXEC_TIMEOUT or compute wrong data)",
                    self.seq,
                    theirs.describe(),
                    mine.describe()
                ));
            }
        }
        match first_bad {
            Some(m) => Err(Fail::new(ErrorKind::Para, m)),
            None if exts.iter().all(|e| e.linked) => Ok(Some(exts)),
            None => Ok(None),
        }
    }
}

static RUNS_DIRECT: AtomicU64 = AtomicU64::new(0);
static RUNS_TCP: AtomicU64 = AtomicU64::new(0);

/// How many collectives of more than one rank this process has run, by the
/// path their data took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Runs {
    /// On direct same-host links ([`super::direct`]).
    pub direct: u64,
    /// Over the TCP mesh.
    pub tcp: u64,
}

/// The counts so far (for tests and benchmarks).
pub fn runs() -> Runs {
    Runs {
        direct: RUNS_DIRECT.load(Ordering::Relaxed),
        tcp: RUNS_TCP.load(Ordering::Relaxed),
    }
}

/// Fails at once when the stream's stop flag is already raised: the stream
/// is being destroyed, or it stopped on an earlier failure
/// (`ACL_STOP_ON_FAILURE`) and skips this task. The caller's failure path
/// then tells the other ranks, so that they do not wait for the timeout.
fn not_stopped(stop: &AtomicBool) -> Result<(), Fail> {
    if stop.load(Ordering::Relaxed) {
        return Err(Fail::new(
            ErrorKind::Internal,
            "the stream stopped (destroyed, or stopped on an earlier failure) before this task ran",
        ));
    }
    Ok(())
}

/// Runs collective number `seq` of `comm` (on a stream worker).
///
/// # Errors
///
/// The failure, also recorded in the communicator and told to its other
/// ranks by the caller.
pub fn run(comm: &Comm, seq: u64, coll: &Coll, stop: &AtomicBool) -> Result<(), Fail> {
    not_stopped(stop)?;
    // A collective of this communicator timed out here: its peer is stopped
    // or gone, and the collectives queued behind it fail at once rather
    // than each waiting for that peer for another exec timeout (issue 15
    // measured three timeouts for three queued collectives). Whether
    // hardware does the same under ACL_CONTINUE_ON_FAILURE was not read:
    // listed in FIDELITY.md's known differences.
    if let Some(f) = comm.timed_out() {
        return Err(Fail {
            kind: ErrorKind::Timeout,
            msg: format!(
                "collective #{seq} was not run: an earlier collective of this communicator \
                 timed out ({})",
                f.msg
            ),
            memory: false,
            // Already told to the other ranks by the first failure.
            remote: true,
        });
    }
    let ctx = Ctx {
        c: comm,
        tag: seq,
        seq,
        stop,
    };
    if ctx.n() > 1
        && let Some(exts) = ctx.exchange_signatures(coll)?
    {
        RUNS_DIRECT.fetch_add(1, Ordering::Relaxed);
        return super::direct::run(&ctx, coll, &exts);
    }
    if ctx.n() > 1 {
        RUNS_TCP.fetch_add(1, Ordering::Relaxed);
    }
    match coll {
        Coll::Barrier => Ok(()),
        Coll::AllReduce {
            send, recv, dt, op, ..
        } => all_reduce(&ctx, send, recv, &coll.blocks(ctx.n()), *dt, *op),
        Coll::ReduceScatter {
            send, recv, dt, op, ..
        }
        | Coll::ReduceScatterV {
            send, recv, dt, op, ..
        } => ring_reduce_scatter(&ctx, send, &coll.blocks(ctx.n()), *dt, *op, |off, x| {
            recv.write(off, &x)
        }),
        Coll::AllGather { send, recv, .. } | Coll::AllGatherV { send, recv, .. } => {
            let blocks = coll.blocks(ctx.n());
            let (o, l) = blocks[ctx.me() as usize];
            send.copy_to(0, recv, o, l)?;
            ring_all_gather(&ctx, recv, &blocks, |off, len| send.read(off, len))
        }
        Coll::Broadcast { buf, root, .. } => broadcast(&ctx, buf, coll.count_bytes(), *root),
        Coll::Reduce {
            send,
            recv,
            dt,
            op,
            root,
            ..
        } => chain_reduce(&ctx, send, recv, coll.count_bytes(), *dt, *op, *root),
        Coll::Scatter {
            send, recv, root, ..
        } => scatter(&ctx, send, recv, coll.count_bytes(), *root),
        Coll::AlltoAll { send, recv, .. } | Coll::AlltoAllV { send, recv, .. } => {
            let (sblocks, rblocks) = coll.a2a_blocks(ctx.n());
            all_to_all(&ctx, send, recv, &sblocks, &rblocks)
        }
    }
}

/// `count` elements split into `n` nearly equal blocks, in bytes.
fn even_blocks(count: u64, n: u32, size: usize) -> Vec<(usize, usize)> {
    let (count, n) = (count as usize, n as usize);
    (0..n)
        .map(|c| {
            let start = c * count / n;
            let end = (c + 1) * count / n;
            (start * size, (end - start) * size)
        })
        .collect()
}

pub(super) fn v_blocks(counts: &[u64], displs: &[u64], size: usize) -> Vec<(usize, usize)> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| (d as usize * size, c as usize * size))
        .collect()
}

fn all_reduce(
    ctx: &Ctx<'_>,
    send: &Mem,
    recv: &Mem,
    blocks: &[(usize, usize)],
    dt: DataType,
    op: ReduceOp,
) -> Result<(), Fail> {
    let me = ctx.me() as usize;
    let base = blocks[me].0;
    let mut mine: Vec<Vec<u8>> = Vec::new();
    ring_reduce_scatter(ctx, send, blocks, dt, op, |off, x| {
        recv.write(base + off, &x)?;
        mine.push(x);
        Ok(())
    })?;
    let mut mine = mine.into_iter();
    ring_all_gather(ctx, recv, blocks, |_, _| {
        Ok(mine.next().unwrap_or_default())
    })
}

/// Ring reduce-scatter over `src`'s `blocks` (one per rank, in bytes):
/// hands this rank's fully reduced block to `out`, piece by piece (offset
/// within the block, bytes).
fn ring_reduce_scatter(
    ctx: &Ctx<'_>,
    src: &Mem,
    blocks: &[(usize, usize)],
    dt: DataType,
    op: ReduceOp,
    mut out: impl FnMut(usize, Vec<u8>) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let n = ctx.n() as usize;
    let r = ctx.me() as usize;
    if n == 1 {
        for (o, l) in pieces(blocks[0].1) {
            out(o, src.read(blocks[0].0 + o, l)?)?;
        }
        return Ok(());
    }
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    let mut carry: Vec<Vec<u8>> = Vec::new();
    for s in 0..n - 1 {
        let send_c = (r + 2 * n - s - 1) % n;
        let recv_c = (r + 2 * n - s - 2) % n;
        let (so, sl) = blocks[send_c];
        let (ro, rl) = blocks[recv_c];
        let sp = pieces(sl);
        let rp = pieces(rl);
        let mut outgoing = std::mem::take(&mut carry).into_iter();
        for k in 0..sp.len().max(rp.len()) {
            if let Some(&(po, pl)) = sp.get(k) {
                let data = if s == 0 {
                    src.read(so + po, pl)?
                } else {
                    outgoing.next().unwrap_or_default()
                };
                ctx.send(right, &data)?;
            }
            if let Some(&(po, pl)) = rp.get(k) {
                let mut x = ctx.recv_len(left, pl)?;
                src.reduce_into(ro + po, &mut x, dt, op)?;
                if s == n - 2 {
                    out(po, x)?;
                } else {
                    carry.push(x);
                }
            }
        }
    }
    Ok(())
}

/// Ring all-gather into `dst`'s `blocks`; this rank's own block is already
/// in place, and `mine(offset, len)` gives its pieces to send.
fn ring_all_gather(
    ctx: &Ctx<'_>,
    dst: &Mem,
    blocks: &[(usize, usize)],
    mut mine: impl FnMut(usize, usize) -> Result<Vec<u8>, Fail>,
) -> Result<(), Fail> {
    let n = ctx.n() as usize;
    let r = ctx.me() as usize;
    if n == 1 {
        return Ok(());
    }
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    let mut carry: Vec<Vec<u8>> = Vec::new();
    for s in 0..n - 1 {
        let send_c = (r + n - s) % n;
        let recv_c = (r + 2 * n - s - 1) % n;
        let sp = pieces(blocks[send_c].1);
        let (ro, rl) = blocks[recv_c];
        let rp = pieces(rl);
        let mut outgoing = std::mem::take(&mut carry).into_iter();
        for k in 0..sp.len().max(rp.len()) {
            if let Some(&(po, pl)) = sp.get(k) {
                let data = if s == 0 {
                    mine(po, pl)?
                } else {
                    outgoing.next().unwrap_or_default()
                };
                ctx.send(right, &data)?;
            }
            if let Some(&(po, pl)) = rp.get(k) {
                let x = ctx.recv_len(left, pl)?;
                dst.write(ro + po, &x)?;
                if s < n - 2 {
                    carry.push(x);
                }
            }
        }
    }
    Ok(())
}

fn broadcast(ctx: &Ctx<'_>, buf: &Mem, bytes: usize, root: u32) -> Result<(), Fail> {
    let n = ctx.n();
    if n == 1 {
        return Ok(());
    }
    let me = ctx.me();
    let pos = (me + n - root) % n;
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    for (po, pl) in pieces(bytes) {
        let data = if pos == 0 {
            buf.read(po, pl)?
        } else {
            let x = ctx.recv_len(left, pl)?;
            buf.write(po, &x)?;
            x
        };
        if pos != n - 1 {
            ctx.send(right, &data)?;
        }
    }
    Ok(())
}

fn chain_reduce(
    ctx: &Ctx<'_>,
    send: &Mem,
    recv: &Mem,
    bytes: usize,
    dt: DataType,
    op: ReduceOp,
    root: u32,
) -> Result<(), Fail> {
    let n = ctx.n();
    let me = ctx.me();
    // The chain starts right of the root and ends at the root.
    let pos = (me + n - root - 1) % n;
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    for (po, pl) in pieces(bytes) {
        let mut x = if pos == 0 {
            send.read(po, pl)?
        } else {
            let mut x = ctx.recv_len(left, pl)?;
            send.reduce_into(po, &mut x, dt, op)?;
            x
        };
        if pos == n - 1 {
            recv.write(po, &x)?;
        } else {
            ctx.send(right, &x)?;
            x.clear();
        }
    }
    Ok(())
}

fn scatter(ctx: &Ctx<'_>, send: &Mem, recv: &Mem, bytes: usize, root: u32) -> Result<(), Fail> {
    let n = ctx.n();
    let me = ctx.me();
    if me == root {
        for j in (0..n).filter(|&j| j != me) {
            for (po, pl) in pieces(bytes) {
                ctx.send(j, &send.read(j as usize * bytes + po, pl)?)?;
            }
        }
        send.copy_to(me as usize * bytes, recv, 0, bytes)
    } else {
        for (po, pl) in pieces(bytes) {
            let x = ctx.recv_len(root, pl)?;
            recv.write(po, &x)?;
        }
        Ok(())
    }
}

fn all_to_all(
    ctx: &Ctx<'_>,
    send: &Mem,
    recv: &Mem,
    sblocks: &[(usize, usize)],
    rblocks: &[(usize, usize)],
) -> Result<(), Fail> {
    let n = ctx.n() as usize;
    let me = ctx.me() as usize;
    for d in 1..n {
        let to = (me + d) % n;
        let (so, sl) = sblocks[to];
        for (po, pl) in pieces(sl) {
            ctx.send(to as u32, &send.read(so + po, pl)?)?;
        }
    }
    let (so, sl) = sblocks[me];
    let (ro, _) = rblocks[me];
    send.copy_to(so, recv, ro, sl)?;
    for d in 1..n {
        let from = (me + n - d) % n;
        let (ro, rl) = rblocks[from];
        for (po, pl) in pieces(rl) {
            let x = ctx.recv_len(from as u32, pl)?;
            recv.write(ro + po, &x)?;
        }
    }
    Ok(())
}

/// One send or receive of a batch (`HcclSend`, `HcclRecv`,
/// `HcclBatchSendRecv`, or a group).
#[derive(Debug, Clone)]
pub struct P2p {
    /// A send (else a receive).
    pub send: bool,
    /// The other rank.
    pub peer: u32,
    /// The data.
    pub buf: Mem,
    /// Elements.
    pub count: u64,
    /// Their type.
    pub dt: DataType,
    /// Its number among the sends to (receives from) `peer`.
    pub seq: u64,
}

fn p2p_sig(p: &P2p) -> Vec<u8> {
    let mut v = p.count.to_le_bytes().to_vec();
    v.extend_from_slice(&p.dt.to_wire().to_le_bytes());
    v
}

fn describe_p2p(b: &[u8]) -> String {
    if b.len() != 12 {
        return "a malformed request".to_string();
    }
    let count = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
    let dt = u32::from_le_bytes(b[8..12].try_into().unwrap_or_default());
    format!("{count} elements of {}", type_name(dt))
}

/// Runs a batch of sends and receives: receives announce themselves first,
/// then every send waits for its receiver and sends, then every receive
/// takes its data — so the order of the items never deadlocks.
///
/// # Errors
///
/// `HCCL_E_PARA` on both sides when a send and its receive disagree on
/// count or type; timeouts and remote failures as for collectives.
pub fn run_p2p(comm: &Comm, items: &[P2p], stop: &AtomicBool) -> Result<(), Fail> {
    use super::direct::{BUF, Buf, copy_piece, source};
    not_stopped(stop)?;
    const DATA: u64 = 0;
    const READY: u64 = 1;
    const DONE: u64 = 2;
    let t = &comm.transport;
    let tag = |seq: u64, kind: u64| P2P | (seq << 2) | kind;
    let waited_for = |mut f: Fail, peers: &[u32]| {
        if f.kind == ErrorKind::Timeout {
            let who = peers
                .iter()
                .map(|&r| format!("rank {r} (at {})", t.addr(comm.mesh(r))))
                .collect::<Vec<_>>()
                .join(" or ");
            f.msg = format!(
                "rank {} waited for {who} longer than the exec timeout ({:?}); its matching \
                 HcclSend/HcclRecv was not called",
                comm.rank,
                comm.exec_timeout.unwrap_or_default()
            );
        }
        f
    };
    let recv = |from: u32, tag: u64| {
        t.recv(
            comm.uid,
            tag,
            0,
            comm.mesh(from),
            &[comm.mesh(from)],
            comm.deadline(),
            stop,
        )
        .map_err(|f| waited_for(f, &[from]))
    };
    let send = |to: u32, tag: u64, data: &[u8]| {
        t.send_data(comm.mesh(to), comm.uid, tag, data, comm.deadline(), stop)
    };
    // Same host, linked both ways: the receiver copies straight from the
    // sender's buffer (see `direct`), then tells it it is done; the sender
    // waits for that at the end of its batch. Every rank serves its items as
    // their messages arrive (not sends first, then receives), so a receive
    // never waits behind a send of its own batch.
    let linked = |peer: u32| comm.pid(comm.rank).is_some() && comm.pid(peer).is_some();
    let mismatch = |p: &P2p, mine: &[u8], theirs: &[u8]| {
        let (me, them) = if p.send {
            ("sends", "receives")
        } else {
            ("receives", "sends")
        };
        Fail::new(
            ErrorKind::Para,
            format!(
                "rank {} {me} {} {} rank {}, which {them} {}; HcclSend and HcclRecv must agree on \
                 count and type",
                comm.rank,
                describe_p2p(mine),
                if p.send { "to" } else { "from" },
                p.peer,
                describe_p2p(theirs)
            ),
        )
    };
    for p in items.iter().filter(|p| !p.send) {
        let mut ready = p2p_sig(p);
        ready.push(u8::from(linked(p.peer)));
        send(p.peer, tag(p.seq, READY), &ready)?;
    }
    // A send whose receiver is ready: its header, then its data (TCP) or
    // nothing (direct: the receiver reads).
    let on_ready = |p: &P2p, ready: &[u8]| -> Result<bool, Fail> {
        let mine = p2p_sig(p);
        let (theirs, flag) = ready.split_at(ready.len().min(mine.len()));
        let agreed = theirs == mine.as_slice();
        let direct = agreed && flag == [1] && linked(p.peer) && p.buf.len > 0;
        let mut header = mine.clone();
        header.push(u8::from(direct));
        let mut b = [0u8; BUF];
        Buf::of(&p.buf).put(&mut b);
        header.extend_from_slice(&b);
        send(p.peer, tag(p.seq, DATA), &header)?;
        if !agreed {
            return Err(mismatch(p, &mine, theirs));
        }
        if !direct {
            for (po, pl) in pieces(p.buf.len) {
                send(p.peer, tag(p.seq, DATA), &p.buf.read(po, pl)?)?;
            }
        }
        Ok(direct)
    };
    // The mappings this batch reads through.
    let mut used = std::collections::HashSet::new();
    // A receive whose sender sent its header: copy, then say so (direct),
    // or take the data pieces that follow (TCP).
    let mut on_header = |p: &P2p, header: &[u8]| -> Result<(), Fail> {
        let mine = p2p_sig(p);
        let (theirs, rest) = header.split_at(header.len().min(mine.len()));
        if theirs != mine.as_slice() {
            return Err(mismatch(p, &mine, theirs));
        }
        if rest.len() != 1 + BUF {
            return Err(Fail::new(
                ErrorKind::Internal,
                format!("rank {} sent a malformed header (protocol error)", p.peer),
            ));
        }
        if rest[0] == 1 {
            let pid = comm.pid(p.peer).unwrap_or(0);
            let src = source(
                &mut comm.maps.lock(),
                &mut used,
                pid,
                &Buf::get(&rest[1..]),
                true,
            );
            let unreadable = |why: &str| {
                Fail::new(
                    ErrorKind::Remote,
                    format!(
                        "rank {} cannot read rank {}'s send buffer (process {pid}): {why}; rank {} \
                         freed it before the send finished",
                        comm.rank, p.peer, p.peer
                    ),
                )
            };
            for (po, pl) in pieces(p.buf.len) {
                if stop.load(Ordering::Relaxed) {
                    return Err(Fail::new(
                        ErrorKind::Internal,
                        "the stream was destroyed while the receive ran",
                    ));
                }
                copy_piece(&src, pid, (&p.buf, po), po, pl, unreadable, |e| {
                    unreadable(&e.to_string())
                })?;
            }
            return send(p.peer, tag(p.seq, DONE), &[1]);
        }
        for (po, pl) in pieces(p.buf.len) {
            let x = recv(p.peer, tag(p.seq, DATA))?;
            if x.len() != pl {
                return Err(Fail::new(
                    ErrorKind::Internal,
                    format!(
                        "rank {} sent a piece of {} bytes, not {pl}",
                        p.peer,
                        x.len()
                    ),
                ));
            }
            p.buf.write(po, &x)?;
        }
        Ok(())
    };
    let mut awaiting: Vec<&P2p> = Vec::new();
    let mut todo: Vec<&P2p> = items.iter().collect();
    let mut failed_receive: Option<&P2p> = None;
    let outcome = (|| -> Result<(), Fail> {
        while !todo.is_empty() {
            let keys: Vec<(u64, u32)> = todo
                .iter()
                .map(|p| {
                    let kind = if p.send { READY } else { DATA };
                    (tag(p.seq, kind), comm.mesh(p.peer))
                })
                .collect();
            let peers: Vec<u32> = todo.iter().map(|p| p.peer).collect();
            let members: Vec<u32> = keys.iter().map(|&(_, m)| m).collect();
            let (i, msg) = t
                .recv_keys(comm.uid, 0, &keys, &members, comm.deadline(), stop)
                .map_err(|f| waited_for(f, &peers))?;
            let p = todo.remove(i);
            if p.send {
                if on_ready(p, &msg)? {
                    awaiting.push(p);
                }
            } else if let Err(f) = on_header(p, &msg) {
                failed_receive = Some(p);
                return Err(f);
            }
        }
        Ok(())
    })();
    // Mappings this batch did not read are dropped only when many pile up,
    // so that send/recv does not evict what collectives keep using.
    {
        let mut maps = comm.maps.lock();
        if maps.len() > MAX_P2P_MAPS {
            maps.retain(|k, _| used.contains(k));
        }
    }
    // On failure, every receive not served tells its sender not to wait
    // for it (a DONE of 0: "not read"), so that no sender hangs.
    if outcome.is_err() {
        for p in todo.iter().filter(|p| !p.send).chain(failed_receive.iter()) {
            let _ = send(p.peer, tag(p.seq, DONE), &[0]);
        }
    }
    // Senders on direct links return once their buffer has been read (or
    // its receiver gave up) — on failure too, so that no reader is left
    // with a buffer its owner may reuse.
    let mut drained = Ok(());
    for p in awaiting {
        let done = recv(p.peer, tag(p.seq, DONE)).and_then(|m| {
            if m == [1] {
                Ok(())
            } else {
                Err(Fail::new(
                    ErrorKind::Remote,
                    format!(
                        "rank {} failed before reading what rank {} sent it",
                        p.peer, comm.rank
                    ),
                ))
            }
        });
        if drained.is_ok() {
            drained = done;
        }
    }
    outcome.and(drained)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_blocks_cover_the_count_in_order() {
        let b = even_blocks(10, 4, 4);
        assert_eq!(b, vec![(0, 8), (8, 12), (20, 8), (28, 12)]);
        assert_eq!(even_blocks(2, 4, 1).iter().map(|b| b.1).sum::<usize>(), 2);
    }

    #[test]
    fn signatures_match_only_when_crossed_counts_agree() {
        let a = Sig {
            kind: Kind::AlltoAllV.to_wire(),
            dt: DataType::Fp32.to_wire(),
            op: NONE,
            root: NONE,
            a: 3,
            b: 5,
            extra: 0,
        };
        let b = Sig { a: 5, b: 3, ..a };
        assert!(a.matches(&b));
        assert!(!a.matches(&a));
        assert_eq!(pieces(0).len(), 0);
        assert_eq!(pieces(PIECE + 1), vec![(0, PIECE), (PIECE, 1)]);
    }
}

//! The connections between the ranks of a communicator: a full mesh of TCP
//! sockets, one per pair of ranks, with a reader thread per socket.
//!
//! Every socket carries frames: a 32-byte header (magic, kind, communicator
//! id, tag, length) and a payload. Reader threads take each frame off the
//! socket as soon as it arrives and file it under (communicator, tag,
//! sender); collectives, running on stream workers, take frames from there,
//! waiting with a deadline. Because readers always drain their sockets, a
//! send never waits for the receiving collective to be running, so any order
//! of sends and receives within a collective is free of deadlocks.
//!
//! A peer that closes its socket without saying goodbye (its process died)
//! is *dead*: every wait on a communicator it belongs to fails at once with
//! `HCCL_E_REMOTE`. One that says goodbye first (it destroyed its
//! communicator) has *left*: waits for it fail the same way, but
//! `HcclGetCommAsyncError` does not report it. A rank whose collective fails
//! tells every peer (an *abort* frame), so that theirs fail too instead of
//! waiting for the timeout.
//!
//! Sub-communicators share their parent's mesh; the communicator id in each
//! frame keeps their traffic apart.

use super::error::{ErrorKind, Fail};
use super::local::{self, Card};
use super::wire::{self, POLL};
use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const FRAME_MAGIC: u32 = 0x4843_534D; // "MSCH"
const HEADER: usize = 32;
const KIND_DATA: u32 = 0;
const KIND_ABORT: u32 = 1;
const KIND_BYE: u32 = 2;
const HELLO_MAGIC: u64 = 0x4F4C_4C45_484D_4953; // "SIMHELLO"

/// An abort received from a peer.
#[derive(Debug, Clone)]
pub struct Abort {
    /// The sender's rank in the mesh.
    pub from: u32,
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The collective (sequence number) that failed there.
    pub seq: u64,
    /// Its message.
    pub msg: String,
}

/// A peer's state as seen by its reader.
#[derive(Debug, Clone)]
enum PeerState {
    Up,
    /// Said goodbye (destroyed its communicator).
    Left,
    /// The connection broke; why.
    Dead(String),
}

#[derive(Default)]
struct Inbox {
    msgs: HashMap<(u64, u64, u32), VecDeque<Vec<u8>>>,
    aborts: HashMap<u64, Abort>,
}

/// The state reader threads share with waiting collectives.
pub struct Shared {
    inbox: Mutex<Inbox>,
    peers: Mutex<Vec<PeerState>>,
    cv: Condvar,
    closing: AtomicBool,
    /// Each mesh rank's listening address.
    pub addrs: Vec<SocketAddr>,
}

struct Peer {
    sock: Mutex<TcpStream>,
}

/// One rank's end of a mesh.
pub struct Transport {
    /// This rank in the mesh.
    pub rank: u32,
    /// Ranks in the mesh.
    pub nranks: u32,
    /// State shared with the readers.
    pub shared: Arc<Shared>,
    peers: Vec<Option<Peer>>,
    readers: Mutex<Vec<JoinHandle<()>>>,
    /// Per mesh rank, the process to read directly when it is linked to this
    /// rank on the same host ([`super::local`]); this rank's own entry too.
    pub links: Vec<Option<u32>>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("rank", &self.rank)
            .field("nranks", &self.nranks)
            .finish()
    }
}

fn hello(mesh: u64, rank: u32, nranks: u32) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[..8].copy_from_slice(&HELLO_MAGIC.to_le_bytes());
    b[8..16].copy_from_slice(&mesh.to_le_bytes());
    b[16..20].copy_from_slice(&rank.to_le_bytes());
    b[20..24].copy_from_slice(&nranks.to_le_bytes());
    b
}

/// Builds the mesh of `rank` among `addrs.len()` ranks: connects to every
/// lower rank, accepts every higher one on `listener`, each connection
/// introduced by a hello naming the mesh (`mesh`, the same on every rank)
/// and the rank. Connections with another mesh id are turned away.
///
/// # Errors
///
/// `HCCL_E_TCP_CONNECT` when a lower rank cannot be reached,
/// `HCCL_E_TIMEOUT` when a higher rank has not connected by `deadline`,
/// `HCCL_E_PARA` when a peer belongs to another communicator.
pub fn build(
    rank: u32,
    addrs: Vec<SocketAddr>,
    listener: TcpListener,
    mesh: u64,
    deadline: Instant,
) -> Result<Transport, Fail> {
    let nranks = addrs.len() as u32;
    let mode = local::mode()?;
    let mine = Card::mine(mode);
    let mut links: Vec<Option<u32>> = (0..nranks).map(|_| None).collect();
    if mode == local::Mode::Direct {
        links[rank as usize] = Some(mine.pid);
    }
    let mut socks: Vec<Option<TcpStream>> = (0..nranks).map(|_| None).collect();
    let accepted = std::thread::scope(|scope| {
        let acceptor =
            scope.spawn(|| accept_higher(rank, nranks, &listener, mesh, &mine, deadline));
        for j in 0..rank {
            let addr = addrs[j as usize];
            let mut s = wire::connect_retry(addr, deadline).map_err(|e| {
                Fail::new(
                    wire::connect_kind(&e),
                    format!("rank {rank} cannot connect to rank {j} at {addr}: {e}"),
                )
            })?;
            s.set_write_timeout(Some(POLL))
                .and_then(|()| {
                    let mut h = hello(mesh, rank, nranks).to_vec();
                    h.extend_from_slice(&mine.bytes());
                    wire::write_all_by(&mut s, &h, Some(deadline), &|| false)
                })
                .map_err(|e| {
                    Fail::new(
                        ErrorKind::TcpTransfer,
                        format!("rank {rank} cannot greet rank {j} at {addr}: {e}"),
                    )
                })?;
            s.set_read_timeout(Some(POLL)).ok();
            let mut ack = [0u8; 1 + local::CARD];
            match wire::read_exact_by(&mut s, &mut ack, deadline) {
                Ok(()) if ack[0] == 1 => {
                    let mut card = [0u8; local::CARD];
                    card.copy_from_slice(&ack[1..]);
                    links[j as usize] = Card::parse(&card).link(&mine);
                }
                Ok(()) | Err(_) if Instant::now() < deadline => {
                    return Err(Fail::new(
                        ErrorKind::Para,
                        format!(
                            "rank {j} at {addr} turned rank {rank} away: it belongs to another \
                             communicator (different root info or rank table), or another \
                             process listens there"
                        ),
                    ));
                }
                _ => {
                    return Err(Fail::new(
                        ErrorKind::Timeout,
                        format!("rank {j} at {addr} did not answer rank {rank}'s greeting in time"),
                    ));
                }
            }
            socks[j as usize] = Some(s);
        }
        acceptor.join().unwrap_or_else(|_| {
            Err(Fail::new(
                ErrorKind::Internal,
                "the acceptor thread panicked",
            ))
        })
    })?;
    for (j, s, link) in accepted {
        socks[j as usize] = Some(s);
        links[j as usize] = link;
    }
    Ok(Transport::start(rank, nranks, addrs, socks, links))
}

fn accept_higher(
    rank: u32,
    nranks: u32,
    listener: &TcpListener,
    mesh: u64,
    mine: &Card,
    deadline: Instant,
) -> Result<Vec<(u32, TcpStream, Option<u32>)>, Fail> {
    let want = nranks - rank - 1;
    let mut got: Vec<(u32, TcpStream, Option<u32>)> = Vec::new();
    listener
        .set_nonblocking(true)
        .map_err(|e| Fail::new(ErrorKind::TcpConnect, format!("listener: {e}")))?;
    while (got.len() as u32) < want {
        match listener.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                wire::tune(&s);
                let _ = s.set_read_timeout(Some(POLL));
                let mut h = [0u8; 24 + local::CARD];
                let per_conn = deadline.min(Instant::now() + Duration::from_secs(10));
                if wire::read_exact_by(&mut s, &mut h, per_conn).is_err() {
                    continue;
                }
                let magic = wire::u64_at(&h, 0);
                let their_mesh = wire::u64_at(&h, 8);
                let j = wire::u32_at(&h, 16);
                let n = wire::u32_at(&h, 20);
                let ok = magic == HELLO_MAGIC
                    && their_mesh == mesh
                    && n == nranks
                    && j > rank
                    && j < nranks
                    && !got.iter().any(|(k, _, _)| *k == j);
                let _ = s.set_write_timeout(Some(POLL));
                let mut ack = vec![u8::from(ok)];
                ack.extend_from_slice(&mine.bytes());
                let _ = wire::write_all_by(&mut s, &ack, Some(per_conn), &|| false);
                if ok {
                    let mut card = [0u8; local::CARD];
                    card.copy_from_slice(&h[24..]);
                    got.push((j, s, Card::parse(&card).link(mine)));
                }
            }
            Err(e) if wire::is_would_block(&e) => {
                if Instant::now() >= deadline {
                    let mut missing: Vec<u32> = (rank + 1..nranks)
                        .filter(|j| !got.iter().any(|(k, _, _)| k == j))
                        .collect();
                    missing.sort_unstable();
                    return Err(Fail::new(
                        ErrorKind::Timeout,
                        format!(
                            "rank {rank} waited for ranks {missing:?} to connect to {} until the \
                             connect timeout",
                            listener
                                .local_addr()
                                .map_or_else(|_| "?".to_string(), |a| a.to_string())
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => {
                return Err(Fail::new(
                    ErrorKind::TcpConnect,
                    format!("rank {rank} cannot accept connections: {e}"),
                ));
            }
        }
    }
    Ok(got)
}

impl Transport {
    fn start(
        rank: u32,
        nranks: u32,
        addrs: Vec<SocketAddr>,
        socks: Vec<Option<TcpStream>>,
        links: Vec<Option<u32>>,
    ) -> Transport {
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox::default()),
            peers: Mutex::new(vec![PeerState::Up; nranks as usize]),
            cv: Condvar::new(),
            closing: AtomicBool::new(false),
            addrs,
        });
        let mut readers = Vec::new();
        let mut peers = Vec::new();
        for (j, s) in socks.into_iter().enumerate() {
            let Some(s) = s else {
                peers.push(None);
                continue;
            };
            let _ = s.set_read_timeout(None);
            let _ = s.set_write_timeout(Some(POLL));
            match s.try_clone() {
                Ok(r) => {
                    let sh = shared.clone();
                    let spawned = std::thread::Builder::new()
                        .name(format!("cann-sim-hccl-r{rank}-from{j}"))
                        .spawn(move || reader(sh, j as u32, r));
                    match spawned {
                        Ok(h) => readers.push(h),
                        Err(e) => {
                            shared.mark(j as u32, PeerState::Dead(format!("no reader thread: {e}")))
                        }
                    }
                }
                Err(e) => shared.mark(
                    j as u32,
                    PeerState::Dead(format!("cannot clone the socket: {e}")),
                ),
            }
            peers.push(Some(Peer {
                sock: Mutex::new(s),
            }));
        }
        Transport {
            rank,
            nranks,
            shared,
            peers,
            readers: Mutex::new(readers),
            links,
        }
    }

    /// The listening address of mesh rank `j`, for messages.
    pub fn addr(&self, j: u32) -> String {
        self.shared
            .addrs
            .get(j as usize)
            .map_or_else(|| "?".to_string(), |a| a.to_string())
    }

    /// Sends one frame to mesh rank `to`.
    ///
    /// # Errors
    ///
    /// `HCCL_E_TIMEOUT` when the peer does not take the data by `deadline`
    /// (it stalls), `HCCL_E_REMOTE` when its connection is broken.
    #[allow(clippy::too_many_arguments)]
    pub fn send(
        &self,
        to: u32,
        kind: u32,
        uid: u64,
        tag: u64,
        data: &[u8],
        deadline: Option<Instant>,
        stop: &AtomicBool,
    ) -> Result<(), Fail> {
        let Some(Some(peer)) = self.peers.get(to as usize) else {
            return Err(Fail::new(
                ErrorKind::Internal,
                format!("no connection to rank {to}"),
            ));
        };
        let mut h = [0u8; HEADER];
        h[..4].copy_from_slice(&FRAME_MAGIC.to_le_bytes());
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[8..16].copy_from_slice(&uid.to_le_bytes());
        h[16..24].copy_from_slice(&tag.to_le_bytes());
        h[24..32].copy_from_slice(&(data.len() as u64).to_le_bytes());
        let stopped =
            || stop.load(Ordering::Relaxed) || self.shared.closing.load(Ordering::Relaxed);
        let mut s = peer.sock.lock();
        let outcome = if data.len() <= 64 << 10 {
            let mut buf = Vec::with_capacity(HEADER + data.len());
            buf.extend_from_slice(&h);
            buf.extend_from_slice(data);
            wire::write_all_by(&mut s, &buf, deadline, &stopped)
        } else {
            wire::write_all_by(&mut s, &h, deadline, &stopped)
                .and_then(|()| wire::write_all_by(&mut s, data, deadline, &stopped))
        };
        drop(s);
        outcome.map_err(|e| {
            if e.kind() == std::io::ErrorKind::TimedOut {
                Fail::new(
                    ErrorKind::Timeout,
                    format!(
                        "rank {} (at {}) did not take data from rank {} within the exec timeout \
                         (it stalls)",
                        to,
                        self.addr(to),
                        self.rank
                    ),
                )
            } else {
                Fail::new(
                    ErrorKind::Remote,
                    format!(
                        "sending to rank {to} (at {}) failed: {e}; the rank is gone",
                        self.addr(to)
                    ),
                )
            }
        })
    }

    /// Takes the next frame from mesh rank `from` filed under (`uid`,
    /// `tag`), waiting until `deadline`. `members` are the mesh ranks of
    /// the communicator: a dead one fails the wait, as does `from` having
    /// left without sending the frame.
    ///
    /// # Errors
    ///
    /// `HCCL_E_TIMEOUT` at the deadline; `HCCL_E_REMOTE` for a peer gone or
    /// an abort from a peer (`HCCL_E_PARA` when the peer aborted collective
    /// `seq` for an argument mismatch); `HCCL_E_INTERNAL` when the stream is
    /// being destroyed.
    #[allow(clippy::too_many_arguments)]
    pub fn recv(
        &self,
        uid: u64,
        tag: u64,
        seq: u64,
        from: u32,
        members: &[u32],
        deadline: Option<Instant>,
        stop: &AtomicBool,
    ) -> Result<Vec<u8>, Fail> {
        self.recv_any(uid, tag, seq, &[from], members, deadline, stop)
            .map(|(_, m)| m)
    }

    /// [`Transport::recv`] from whichever of the mesh ranks `from` sent
    /// first; returns the sender and the frame.
    ///
    /// # Errors
    ///
    /// As [`Transport::recv`]; any of `from` having left fails the wait.
    #[allow(clippy::too_many_arguments)]
    pub fn recv_any(
        &self,
        uid: u64,
        tag: u64,
        seq: u64,
        from: &[u32],
        members: &[u32],
        deadline: Option<Instant>,
        stop: &AtomicBool,
    ) -> Result<(u32, Vec<u8>), Fail> {
        let keys: Vec<(u64, u32)> = from.iter().map(|&j| (tag, j)).collect();
        self.recv_keys(uid, seq, &keys, members, deadline, stop)
            .map(|(i, m)| (keys[i].1, m))
    }

    /// [`Transport::recv`] of the first frame filed under any of `keys`
    /// (tag, mesh rank); returns the key's index and the frame.
    ///
    /// # Errors
    ///
    /// As [`Transport::recv`]; any sender of `keys` having left fails the
    /// wait.
    pub fn recv_keys(
        &self,
        uid: u64,
        seq: u64,
        keys: &[(u64, u32)],
        members: &[u32],
        deadline: Option<Instant>,
        stop: &AtomicBool,
    ) -> Result<(usize, Vec<u8>), Fail> {
        let from: Vec<u32> = keys.iter().map(|&(_, j)| j).collect();
        let mut inbox = self.shared.inbox.lock();
        loop {
            for (i, &(tag, j)) in keys.iter().enumerate() {
                let key = (uid, tag, j);
                if let Some(q) = inbox.msgs.get_mut(&key)
                    && let Some(m) = q.pop_front()
                {
                    if q.is_empty() {
                        inbox.msgs.remove(&key);
                    }
                    return Ok((i, m));
                }
            }
            if let Some(a) = inbox.aborts.get(&uid) {
                // A peer that timed out makes this rank fail as a timeout
                // too (on hardware it would wait for its own exec timeout:
                // the simulator ends the wait early), which
                // HcclGetCommAsyncError does not report.
                let kind = match a.kind {
                    ErrorKind::Para if a.seq == seq => ErrorKind::Para,
                    ErrorKind::Timeout => ErrorKind::Timeout,
                    _ => ErrorKind::Remote,
                };
                return Err(Fail {
                    kind,
                    msg: format!("rank {} reported a failure: {}", a.from, a.msg),
                    memory: false,
                    remote: true,
                });
            }
            // A crashed member dooms the collective; one that left (it
            // destroyed its communicator after its part) only fails waits
            // for frames it never sent.
            if let Some(f) = self.dead(members).or_else(|| self.gone(&from)) {
                return Err(f);
            }
            if self.shared.closing.load(Ordering::Relaxed) {
                return Err(Fail::new(
                    ErrorKind::Internal,
                    "the communicator was destroyed",
                ));
            }
            if stop.load(Ordering::Relaxed) {
                return Err(Fail::new(
                    ErrorKind::Internal,
                    "the stream was destroyed while the collective waited",
                ));
            }
            let now = Instant::now();
            let mut until = now + POLL;
            if let Some(d) = deadline {
                if now >= d {
                    return Err(Fail::new(
                        ErrorKind::Timeout,
                        format!(
                            "rank {} waited for {} until the exec timeout; it did not call the \
                             same collective (or stalls)",
                            self.rank,
                            from.iter()
                                .map(|&j| format!("rank {j} (at {})", self.addr(j)))
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    ));
                }
                until = until.min(d);
            }
            self.shared.cv.wait_until(&mut inbox, until);
        }
    }

    /// A failure for the first dead or departed rank among `members`.
    pub fn gone(&self, members: &[u32]) -> Option<Fail> {
        let peers = self.shared.peers.lock();
        members.iter().find_map(|&j| match peers.get(j as usize)? {
            PeerState::Up => None,
            PeerState::Left => Some(Fail::new(
                ErrorKind::Remote,
                format!("rank {j} (at {}) destroyed its communicator", self.addr(j)),
            )),
            PeerState::Dead(why) => Some(Fail::new(
                ErrorKind::Remote,
                format!("rank {j} (at {}) is gone: {why}", self.addr(j)),
            )),
        })
    }

    /// The first dead (not departed) rank among `members`, as a failure.
    pub fn dead(&self, members: &[u32]) -> Option<Fail> {
        let peers = self.shared.peers.lock();
        members.iter().find_map(|&j| match peers.get(j as usize)? {
            PeerState::Dead(why) => Some(Fail::new(
                ErrorKind::Remote,
                format!("rank {j} (at {}) is gone: {why}", self.addr(j)),
            )),
            _ => None,
        })
    }

    /// An abort received for communicator `uid`, if any.
    pub fn abort_of(&self, uid: u64) -> Option<Abort> {
        self.shared.inbox.lock().aborts.get(&uid).cloned()
    }

    /// Tells `members` that collective `seq` of communicator `uid` failed
    /// here (best effort, each send bounded to one second).
    pub fn broadcast_abort(&self, uid: u64, members: &[u32], seq: u64, fail: &Fail) {
        let body = wire::Writer::default()
            .u32(fail.kind.to_wire())
            .u64(seq)
            .str(&fail.msg)
            .b;
        let never = AtomicBool::new(false);
        for &j in members {
            if j != self.rank && self.gone(&[j]).is_none() {
                let _ = self.send(
                    j,
                    KIND_ABORT,
                    uid,
                    0,
                    &body,
                    Some(Instant::now() + Duration::from_secs(1)),
                    &never,
                );
            }
        }
    }

    /// Sends a data frame.
    ///
    /// # Errors
    ///
    /// As [`Transport::send`].
    pub fn send_data(
        &self,
        to: u32,
        uid: u64,
        tag: u64,
        data: &[u8],
        deadline: Option<Instant>,
        stop: &AtomicBool,
    ) -> Result<(), Fail> {
        self.send(to, KIND_DATA, uid, tag, data, deadline, stop)
    }
}

impl Shared {
    fn mark(&self, j: u32, state: PeerState) {
        let mut peers = self.peers.lock();
        if let Some(p) = peers.get_mut(j as usize)
            && matches!(p, PeerState::Up)
        {
            *p = state;
        }
        drop(peers);
        let _g = self.inbox.lock();
        self.cv.notify_all();
    }
}

fn reader(shared: Arc<Shared>, from: u32, mut s: TcpStream) {
    loop {
        let mut h = [0u8; HEADER];
        if let Err(e) = s.read_exact(&mut h) {
            if !shared.closing.load(Ordering::Relaxed) {
                let why = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    "it closed the connection without destroying its communicator (its process \
                     exited or crashed)"
                        .to_string()
                } else {
                    format!("the connection broke: {e}")
                };
                shared.mark(from, PeerState::Dead(why));
            }
            return;
        }
        let word = |i: usize| wire::u64_at(&h, i);
        let magic = wire::u32_at(&h, 0);
        let kind = wire::u32_at(&h, 4);
        let (uid, tag, len) = (word(8), word(16), word(24) as usize);
        if magic != FRAME_MAGIC {
            shared.mark(
                from,
                PeerState::Dead("it sent a malformed frame (protocol error)".to_string()),
            );
            return;
        }
        let mut body = Vec::with_capacity(len);
        match (&mut s).take(len as u64).read_to_end(&mut body) {
            Ok(n) if n == len => {}
            _ => {
                if !shared.closing.load(Ordering::Relaxed) {
                    shared.mark(
                        from,
                        PeerState::Dead(
                            "its connection closed in the middle of a frame (its process exited \
                             or crashed)"
                                .to_string(),
                        ),
                    );
                }
                return;
            }
        }
        match kind {
            KIND_DATA => {
                let mut inbox = shared.inbox.lock();
                inbox
                    .msgs
                    .entry((uid, tag, from))
                    .or_default()
                    .push_back(body);
                shared.cv.notify_all();
            }
            KIND_ABORT => {
                let mut r = wire::Reader::new(&body);
                let kind = r
                    .u32()
                    .ok()
                    .and_then(ErrorKind::from_wire)
                    .unwrap_or(ErrorKind::Remote);
                let seq = r.u64().unwrap_or(0);
                let msg = r.str().unwrap_or_default();
                let mut inbox = shared.inbox.lock();
                inbox.aborts.entry(uid).or_insert(Abort {
                    from,
                    kind,
                    seq,
                    msg,
                });
                shared.cv.notify_all();
            }
            KIND_BYE => {
                shared.mark(from, PeerState::Left);
            }
            _ => {}
        }
    }
}

impl Drop for Transport {
    fn drop(&mut self) {
        let never = AtomicBool::new(false);
        let soon = Some(Instant::now() + Duration::from_millis(500));
        for j in 0..self.nranks {
            if j != self.rank && self.gone(&[j]).is_none() {
                let _ = self.send(j, KIND_BYE, 0, 0, &[], soon, &never);
            }
        }
        self.shared.closing.store(true, Ordering::Relaxed);
        for p in self.peers.iter().flatten() {
            let _ = p.sock.lock().shutdown(Shutdown::Both);
        }
        {
            let _g = self.shared.inbox.lock();
            self.shared.cv.notify_all();
        }
        for h in self.readers.lock().drain(..) {
            let _ = h.join();
        }
    }
}

//! Creating communicators: the root server behind `HcclGetRootInfo`, the
//! rendezvous of `HcclCommInitRootInfo`, rank tables, `HcclCommInitAll` and
//! sub-communicators.
//!
//! **Root info.** `HcclGetRootInfo` starts a *root server*: a thread with a
//! TCP listener on `HCCL_IF_IP` (default 127.0.0.1) and the port HCCL
//! would choose (see [`start_root_server`]: `HCCL_IF_BASE_PORT` + the
//! physical device id, or the first free port of 60000–60031), whose
//! address and a unique id go into the blob. Each rank's
//! `HcclCommInitRootInfo` opens its own listener (on the interface that
//! reaches the root), registers it with the root server and
//! blocks; when all `nRanks` ranks have registered, the server sends everyone
//! the table of addresses and exits, and the ranks connect to each other
//! (see `transport`). Ranks that disagree on `nRanks`, or claim the same rank,
//! all get `HCCL_E_PARA`; when not every rank has registered within the
//! connect timeout, those that did get `HCCL_E_TIMEOUT` naming the missing
//! ranks. A root server that nobody registers with exits after the connect
//! timeout.
//!
//! **Rank table.** Every rank listens on the address the table gives it and
//! connects to the others directly; the table's content identifies the
//! communicator.

use super::communicator::{Comm, Options};
use super::env::Ports;
use super::error::{ErrorKind, Fail};
use super::transport;
use super::wire::{self, Reader, Root, Writer};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REG_MAGIC: u32 = 0x5245_4731; // "1GER"
const REPLY_OK: u32 = 0;
const REPLY_ERR: u32 = 1;

/// Starts a root server for `device` (logical); returns what the root info
/// holds.
///
/// Its port follows HCCL's `TopoInfoDetect::SetupServer` (hicann/hcomm
/// `src/legacy/ascend910/framework/common/src/topo/topoinfo_detect.cc`):
/// `HCCL_HOST_SOCKET_PORT_RANGE` when set (`auto`: a port the OS picks;
/// otherwise the first free port of the ranges), else exactly
/// `HCCL_IF_BASE_PORT` + the device's physical id, else the first free port
/// of 60000–60031 (`PreemptPortManager::PreemptPortInRange`).
///
/// # Errors
///
/// `HCCL_E_UNAVAIL` when the port (or every port of the range) is in use,
/// as `HcclSocket::Listen` reports (EI0019); `HCCL_E_TCP_CONNECT` when the
/// address cannot be listened on for another reason (the IP is not
/// local); `HCCL_E_PARA` when the base port + device id is past 65535.
pub fn start_root_server(device: u32) -> Result<Root, Fail> {
    let ip = wire::local_ip();
    let env = super::env::current();
    let listener = listen_root(ip, &env.ports, physical_id(device))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Fail::new(ErrorKind::TcpConnect, format!("{ip}: {e}")))?;
    let uid = wire::unique_id();
    let timeout = wire::connect_timeout();
    std::thread::Builder::new()
        .name("cann-sim-hccl-root".to_string())
        .spawn(move || serve(listener, uid, timeout))
        .map_err(|e| {
            Fail::new(
                ErrorKind::Internal,
                format!("cannot start the root server: {e}"),
            )
        })?;
    Ok(Root { addr, uid })
}

/// The physical id of logical device `device` (`ASCEND_RT_VISIBLE_DEVICES`
/// maps one to the other).
fn physical_id(device: u32) -> u32 {
    crate::config::get()
        .ok()
        .and_then(|c| c.visible.get(device as usize).copied())
        .unwrap_or(device)
}

/// Listens for a root server on `ip`, at a port chosen by `ports`.
fn listen_root(ip: IpAddr, ports: &Ports, phys: u32) -> Result<TcpListener, Fail> {
    let bind = |port: u16| TcpListener::bind(SocketAddr::new(ip, port));
    let other = |port: u16, e: std::io::Error| {
        Fail::new(
            ErrorKind::TcpConnect,
            format!("cannot listen on {ip}:{port} for the root info (HCCL_IF_IP): {e}"),
        )
    };
    let in_use = |what: String| {
        Fail::new(
            ErrorKind::Unavailable,
            format!(
                "{what} already in use (EI0019): another process or communicator listens there; \
                 set HCCL_IF_BASE_PORT or HCCL_HOST_SOCKET_PORT_RANGE (e.g. \"auto\") to free ports"
            ),
        )
    };
    let first_free = |ranges: &[(u16, u16)], what: String| {
        for &(a, b) in ranges {
            for port in a..=b {
                match bind(port) {
                    Ok(l) => return Ok(l),
                    Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {}
                    Err(e) => return Err(other(port, e)),
                }
            }
        }
        Err(in_use(what))
    };
    match ports {
        Ports::Auto => bind(0).map_err(|e| other(0, e)),
        Ports::Ranges(r) => first_free(
            r,
            format!("every port of HCCL_HOST_SOCKET_PORT_RANGE on {ip} is"),
        ),
        Ports::Default => {
            let (a, b) = super::env::DEFAULT_PORTS;
            first_free(
                &[(a, b)],
                format!("every port of {ip}:{a}-{b} (the default: HCCL_IF_BASE_PORT is unset) is"),
            )
        }
        Ports::Base(base) => {
            let port = u16::try_from(u32::from(*base) + phys).map_err(|_| {
                Fail::new(
                    ErrorKind::Para,
                    format!("HCCL_IF_BASE_PORT {base} + physical device {phys} is past port 65535; lower it"),
                )
            })?;
            bind(port).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AddrInUse {
                    in_use(format!(
                        "{ip}:{port} (HCCL_IF_BASE_PORT {base} + physical device {phys}) is"
                    ))
                } else {
                    other(port, e)
                }
            })
        }
    }
}

struct Registered {
    rank: u32,
    addr: SocketAddr,
    sock: TcpStream,
}

fn serve(listener: TcpListener, uid: u64, timeout: Duration) {
    let here = listener
        .local_addr()
        .map_or_else(|_| "?".to_string(), |a| a.to_string());
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let mut deadline = Instant::now() + timeout;
    let mut nranks: Option<u32> = None;
    let mut regs: Vec<Registered> = Vec::new();
    let mut error: Option<String> = None;
    loop {
        if let Some(n) = nranks
            && regs.len() as u32 == n
        {
            break;
        }
        if Instant::now() >= deadline {
            let missing: Vec<u32> = match nranks {
                Some(n) => (0..n)
                    .filter(|r| !regs.iter().any(|g| g.rank == *r))
                    .collect(),
                None => Vec::new(),
            };
            let msg = format!(
                "ranks {missing:?} of {} did not join within the connect timeout ({} s; \
                 HCCL_CONNECT_TIMEOUT) (root server at {here})",
                nranks.unwrap_or(0),
                timeout.as_secs_f64()
            );
            for r in &mut regs {
                reply_err(&mut r.sock, ErrorKind::Timeout, &msg);
            }
            return;
        }
        let (mut sock, _) = match listener.accept() {
            Ok(c) => c,
            Err(e) if wire::is_would_block(&e) => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(_) => continue,
        };
        let _ = sock.set_nonblocking(false);
        let per = Instant::now() + Duration::from_secs(10);
        let Ok(body) = wire::recv_msg(&mut sock, per) else {
            continue;
        };
        let mut r = Reader::new(&body);
        let parsed = (|| -> Result<(u64, u32, u32, SocketAddr), String> {
            if r.u32()? != REG_MAGIC {
                return Err("not a cann-sim registration".into());
            }
            let their_uid = r.u64()?;
            let n = r.u32()?;
            let rank = r.u32()?;
            let addr: SocketAddr = r
                .str()?
                .parse()
                .map_err(|_| "a bad listening address".to_string())?;
            Ok((their_uid, n, rank, addr))
        })();
        let Ok((their_uid, n, rank, addr)) = parsed else {
            continue;
        };
        if their_uid != uid {
            reply_err(
                &mut sock,
                ErrorKind::Para,
                &format!(
                    "the root server at {here} serves another communicator (the root info is \
                     stale or from another job)"
                ),
            );
            continue;
        }
        if nranks.is_none() {
            nranks = Some(n);
            // The rendezvous lasts one connect timeout from the first rank.
            deadline = Instant::now() + timeout;
        }
        let want = nranks.unwrap_or(n);
        let problem = if n != want {
            Some(format!(
                "rank {rank} called HcclCommInitRootInfo with nRanks {n}, but rank {} with \
                 {want}; every rank must pass the same nRanks",
                regs.first().map_or(rank, |g| g.rank)
            ))
        } else if regs.iter().any(|g| g.rank == rank) {
            Some(format!(
                "two ranks called HcclCommInitRootInfo with rank {rank}; each rank of 0..{n} \
                 must join exactly once"
            ))
        } else {
            None
        };
        if let Some(p) = problem {
            error.get_or_insert(p);
        }
        regs.push(Registered { rank, addr, sock });
        if let Some(msg) = &error {
            for g in &mut regs {
                reply_err(&mut g.sock, ErrorKind::Para, msg);
            }
            regs.clear();
            // Keep refusing late ranks until the deadline.
        }
    }
    regs.sort_by_key(|g| g.rank);
    let mut w = Writer::default().u32(REPLY_OK).u32(regs.len() as u32);
    for g in &regs {
        w = w.str(&g.addr.to_string());
    }
    let table = w.b;
    let until = Instant::now() + Duration::from_secs(10);
    for g in &mut regs {
        let _ = wire::send_msg(&mut g.sock, &table, until);
    }
}

fn reply_err(sock: &mut TcpStream, kind: ErrorKind, msg: &str) {
    let body = Writer::default()
        .u32(REPLY_ERR)
        .u32(kind.to_wire())
        .str(msg)
        .b;
    let _ = wire::send_msg(sock, &body, Instant::now() + Duration::from_secs(2));
}

/// `HcclCommInitAll`: one communicator per device of `devices` (all of this
/// process), `devices[0]` being rank 0, made together on threads of this
/// call.
///
/// # Errors
///
/// As [`start_root_server`] and [`init_root`] (the first rank's failure);
/// [`ErrorKind::Internal`] when a rank's thread panicked or `devices` is
/// empty.
pub fn init_all(devices: &[u32]) -> Result<Vec<Comm>, Fail> {
    let first = *devices
        .first()
        .ok_or_else(|| Fail::new(ErrorKind::Internal, "no devices"))?;
    let root = start_root_server(first)?;
    let n = devices.len() as u32;
    // Every thread is joined here (a panic becomes its rank's failure)
    // before the first failure is returned.
    let results: Vec<Result<Comm, Fail>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(i, &d)| scope.spawn(move || init_root(n, root, i as u32, d, Options::default())))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Fail::new(
                        ErrorKind::Internal,
                        "a rank's init thread panicked",
                    ))
                })
            })
            .collect()
    });
    results.into_iter().collect()
}

/// `HcclCommInitRootInfo`: joins the communicator of `root` as `rank` of
/// `nranks`, on `device`. Blocks until every rank has joined.
///
/// # Errors
///
/// `HCCL_E_TCP_CONNECT` when the root server cannot be reached (naming its
/// address), `HCCL_E_TIMEOUT` when the other ranks do not all join within
/// the connect timeout, `HCCL_E_PARA` when ranks disagree.
pub fn init_root(
    nranks: u32,
    root: Root,
    rank: u32,
    device: u32,
    options: Options,
) -> Result<Comm, Fail> {
    init_roots(nranks, &[root], rank, device, options)
}

/// `HcclCommInitRootInfoScalable`: as [`init_root`] with several root
/// servers. Every rank registers with each of them in turn (the real
/// library spreads the ranks over the roots to share the load; the
/// simulator's roots each see everyone, which gives the same communicator),
/// and the tables they send back must agree. The communicator's id combines
/// the roots' ids.
///
/// # Errors
///
/// As [`init_root`], for any of the roots; `HCCL_E_INTERNAL` when two roots
/// return different tables.
pub fn init_roots(
    nranks: u32,
    roots: &[Root],
    rank: u32,
    device: u32,
    options: Options,
) -> Result<Comm, Fail> {
    let deadline = Instant::now() + wire::connect_timeout();
    let first = roots
        .first()
        .ok_or_else(|| Fail::new(ErrorKind::Para, "no root info"))?;
    let mut listener = None;
    let mut table: Option<Vec<SocketAddr>> = None;
    for (k, root) in roots.iter().enumerate() {
        let addrs = rendezvous(nranks, root, rank, &mut listener, deadline)?;
        match &table {
            Some(t) if *t != addrs => {
                return Err(Fail::new(
                    ErrorKind::Internal,
                    format!(
                        "rank {rank}: root {k} at {} returned another table of ranks than root 0 \
                         at {}",
                        root.addr, first.addr
                    ),
                ));
            }
            Some(_) => {}
            None => table = Some(addrs),
        }
    }
    let (Some(listener), Some(addrs)) = (listener, table) else {
        return Err(Fail::new(ErrorKind::Internal, "no rendezvous took place"));
    };
    let uid = if roots.len() == 1 {
        first.uid
    } else {
        let ids: Vec<u8> = roots.iter().flat_map(|r| r.uid.to_le_bytes()).collect();
        wire::fnv(&ids)
    };
    let t = transport::build(rank, addrs, listener, uid, deadline)?;
    let members = (0..nranks).collect();
    Ok(Comm::new(uid, rank, device, Arc::new(t), members, options))
}

/// Registers `rank` with the root server of `root` and returns the table of
/// every rank's listening address. The first call opens this rank's
/// listener (on the interface that reaches the root) into `listener`.
fn rendezvous(
    nranks: u32,
    root: &Root,
    rank: u32,
    listener: &mut Option<TcpListener>,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, Fail> {
    let mut conn = wire::connect_retry(root.addr, deadline).map_err(|e| {
        Fail::new(
            ErrorKind::TcpConnect,
            format!(
                "rank {rank} cannot connect to the root server at {} (the process that called \
                 HcclGetRootInfo; is it running?): {e}",
                root.addr
            ),
        )
    })?;
    if listener.is_none() {
        let local_ip = conn
            .local_addr()
            .map_or_else(|_| wire::local_ip(), |a| a.ip());
        let l = TcpListener::bind(SocketAddr::new(local_ip, 0)).map_err(|e| {
            Fail::new(
                ErrorKind::TcpConnect,
                format!("rank {rank} cannot listen on {local_ip}: {e}"),
            )
        })?;
        *listener = Some(l);
    }
    let me = listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .ok_or_else(|| Fail::new(ErrorKind::TcpConnect, "no listening address"))?;
    let reg = Writer::default()
        .u32(REG_MAGIC)
        .u64(root.uid)
        .u32(nranks)
        .u32(rank)
        .str(&me.to_string())
        .b;
    wire::send_msg(&mut conn, &reg, deadline).map_err(|e| {
        Fail::new(
            ErrorKind::TcpConnect,
            format!(
                "rank {rank} cannot register with the root server at {}: {e}",
                root.addr
            ),
        )
    })?;
    // The server answers within its own timeout; allow a little more.
    let reply = wire::recv_msg(&mut conn, deadline + Duration::from_secs(5)).map_err(|e| {
        if wire::is_would_block(&e) {
            Fail::new(
                ErrorKind::Timeout,
                format!(
                    "rank {rank}: the root server at {} did not complete the rendezvous within \
                     the connect timeout",
                    root.addr
                ),
            )
        } else {
            Fail::new(
                ErrorKind::TcpConnect,
                format!(
                    "rank {rank}: the root server at {} closed the connection ({e}); its \
                     process may have exited",
                    root.addr
                ),
            )
        }
    })?;
    let mut r = Reader::new(&reply);
    let bad = |e: String| Fail::new(ErrorKind::Internal, format!("root server reply: {e}"));
    match r.u32().map_err(bad)? {
        REPLY_OK => {}
        _ => {
            let n = r.u32().map_err(bad)?;
            let kind =
                ErrorKind::from_wire(n).ok_or_else(|| bad(format!("unknown failure kind {n}")))?;
            let msg = r.str().map_err(bad)?;
            return Err(Fail::new(kind, msg));
        }
    }
    let n = r.u32().map_err(bad)?;
    let mut addrs = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let a: SocketAddr = r
            .str()
            .map_err(bad)?
            .parse()
            .map_err(|_| bad("bad address".into()))?;
        addrs.push(a);
    }
    Ok(addrs)
}

/// One rank of a rank table: where it listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRank {
    /// `rank_id`.
    pub rank: u32,
    /// The server's address and the rank's port.
    pub addr: SocketAddr,
    /// `device_id`.
    pub device: u32,
}

/// `HcclCommInitClusterInfo`: joins the communicator a rank table describes.
///
/// # Errors
///
/// `HCCL_E_TCP_CONNECT` when this rank's address cannot be listened on,
/// `HCCL_E_TIMEOUT` when the other ranks do not all connect in time.
pub fn init_table(
    ranks: &[TableRank],
    fingerprint: u64,
    rank: u32,
    device: u32,
    options: Options,
) -> Result<Comm, Fail> {
    let deadline = Instant::now() + wire::connect_timeout();
    let me = ranks[rank as usize].addr;
    let listener = TcpListener::bind(me).map_err(|e| {
        Fail::new(
            ErrorKind::TcpConnect,
            format!("rank {rank} cannot listen on {me} (from the rank table): {e}"),
        )
    })?;
    let addrs: Vec<SocketAddr> = ranks.iter().map(|r| r.addr).collect();
    let t = transport::build(rank, addrs, listener, fingerprint, deadline)?;
    let members = (0..ranks.len() as u32).collect();
    Ok(Comm::new(
        fingerprint,
        rank,
        device,
        Arc::new(t),
        members,
        options,
    ))
}

/// Tag of the sub-communicator handshake frames.
pub const HANDSHAKE_TAG: u64 = u64::MAX;

/// `HcclCreateSubCommConfig`: the sub-communicator of `parent` made of
/// `ranks` (parent ranks), numbered `id`, in which this rank is `sub_rank`.
/// Every member must call it with the same list and id; they exchange a
/// handshake over the parent's connections.
///
/// # Errors
///
/// `HCCL_E_PARA` when members disagree on the list, `HCCL_E_TIMEOUT` when a
/// member does not call it within the connect timeout, `HCCL_E_REMOTE` when
/// one is gone.
pub fn sub_comm(
    parent: &Comm,
    ranks: &[u32],
    id: u64,
    sub_rank: u32,
    options: Options,
) -> Result<Comm, Fail> {
    let list: Vec<u8> = ranks.iter().flat_map(|r| r.to_le_bytes()).collect();
    let fp = wire::fnv(&list);
    let mut key = parent.uid.to_le_bytes().to_vec();
    key.extend_from_slice(&id.to_le_bytes());
    let uid = wire::fnv(&key);
    let members: Vec<u32> = ranks.iter().map(|&r| parent.mesh(r)).collect();
    let t = &parent.transport;
    let deadline = Some(Instant::now() + wire::connect_timeout());
    let never = std::sync::atomic::AtomicBool::new(false);
    let hello = Writer::default().u64(fp).u32(ranks.len() as u32).b;
    for (i, &m) in members.iter().enumerate() {
        if i as u32 != sub_rank {
            t.send_data(m, uid, HANDSHAKE_TAG, &hello, deadline, &never)?;
        }
    }
    for (i, &m) in members.iter().enumerate() {
        if i as u32 == sub_rank {
            continue;
        }
        let got = t
            .recv(uid, HANDSHAKE_TAG, 0, m, &members, deadline, &never)
            .map_err(|mut f| {
                if f.kind == ErrorKind::Timeout {
                    f.msg = format!(
                        "parent rank {} did not create sub-communicator {id} within the connect \
                         timeout",
                        ranks[i]
                    );
                }
                f
            })?;
        if got != hello {
            return Err(Fail::new(
                ErrorKind::Para,
                format!(
                    "parent rank {} created sub-communicator {id} with another rank list; \
                     every member must pass the same rankIds",
                    ranks[i]
                ),
            ));
        }
    }
    let mut options = options;
    if options.exec_timeout_s.is_none() {
        options.exec_timeout_s = parent.options.exec_timeout_s;
    }
    if options.name.is_none() {
        options.name = Some(format!("{}_sub{id}", parent.name));
    }
    Ok(Comm::new(
        uid,
        sub_rank,
        parent.device,
        parent.transport.clone(),
        members,
        options,
    ))
}

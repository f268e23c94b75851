//! Bootstrap: getting the root info from rank 0 to every rank, over TCP,
//! configured the way launchers already describe a job.
//!
//! Rank 0 listens on `MASTER_ADDR:MASTER_PORT`, creates the [`RootInfo`],
//! and serves it to each other rank (in a background thread, until all
//! `WORLD_SIZE − 1` ranks have it or the timeout passes); the other ranks
//! connect — retrying while rank 0 is not up yet — and fetch it. Then every
//! rank creates its communicator ([`init_comm`]). Failures name the rank
//! and the address: a port already in use on rank 0, rank 0 unreachable
//! within the connect timeout, a world size that differs between ranks.
//!
//! | variable | meaning | fallback | default |
//! |---|---|---|---|
//! | `RANK` | this rank | `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`, `PMI_RANK` | required |
//! | `WORLD_SIZE` | number of ranks | `SLURM_NTASKS`, `OMPI_COMM_WORLD_SIZE`, `PMI_SIZE` | required |
//! | `LOCAL_RANK` | rank on this host (picks the NPU) | `SLURM_LOCALID`, `OMPI_COMM_WORLD_LOCAL_RANK` | `RANK` |
//! | `MASTER_ADDR` | rank 0's host | | `127.0.0.1` |
//! | `MASTER_PORT` | rank 0's bootstrap port | | `29500` |
//! | `HCCL_BOOTSTRAP_TIMEOUT` | seconds to wait for rank 0 and for the exchange (this crate's own variable: HCCL itself accepts no `HCCL_CONNECT_TIMEOUT` below 120 s) | `HCCL_CONNECT_TIMEOUT` + 20 | `140` |
//!
//! These are what `torchrun`, Slurm's `srun` and Open MPI's `mpirun` set;
//! [`launch`](crate::launch) sets them for local runs. A value that is set
//! but malformed (`RANK=x`, `HCCL_BOOTSTRAP_TIMEOUT=abc`) is an error naming
//! the variable and its value, never ignored; a rank 0 that does not answer
//! within the timeout is an error that says it timed out and after how long.

use crate::comm::Comm;
use crate::config::CommConfig;
use crate::error::{BootstrapErrorKind as Kind, Error, Result};
use crate::root_info::{ROOT_INFO_BYTES, RootInfo};
use acl::Device;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

const MAGIC: &[u8; 8] = b"HCCLRS01";

/// Where this rank stands in the job, and how long to wait.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapConfig {
    /// This rank, `0..world_size`.
    pub rank: u32,
    /// The number of ranks.
    pub world_size: u32,
    /// The rank on this host (which NPU to use).
    pub local_rank: u32,
    /// Rank 0's host name or address.
    pub master_addr: String,
    /// Rank 0's bootstrap port.
    pub master_port: u16,
    /// How long a rank keeps trying to reach rank 0 (and rank 0 waits for
    /// the others).
    pub connect_timeout: Duration,
    /// How long one exchange with rank 0 may take once connected.
    pub exchange_timeout: Duration,
}

impl BootstrapConfig {
    /// A configuration with the default address, port and timeouts.
    pub fn new(rank: u32, world_size: u32) -> BootstrapConfig {
        BootstrapConfig {
            rank,
            world_size,
            local_rank: rank,
            master_addr: "127.0.0.1".to_string(),
            master_port: 29500,
            connect_timeout: Duration::from_secs(140),
            exchange_timeout: Duration::from_secs(140),
        }
    }

    /// Reads the environment (see the module docs).
    ///
    /// # Errors
    ///
    /// [`Error::Bootstrap`] with [`Kind::Environment`] naming a missing or
    /// malformed variable, or a rank not below the world size.
    pub fn from_env() -> Result<BootstrapConfig> {
        BootstrapConfig::from_vars(|k| std::env::var(k).ok())
    }

    /// As [`BootstrapConfig::from_env`], reading variables through `get`.
    ///
    /// # Errors
    ///
    /// As [`BootstrapConfig::from_env`].
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<BootstrapConfig> {
        let env_err = |reason: String| Error::Bootstrap {
            kind: Kind::Environment,
            rank: 0,
            addr: String::new(),
            reason,
        };
        let first = |names: &[&str]| -> Result<Option<(String, u64)>> {
            for n in names {
                if let Some(v) = get(n).filter(|v| !v.trim().is_empty()) {
                    let num = v
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| env_err(format!("{n}={v:?} is not a whole number")))?;
                    return Ok(Some((n.to_string(), num)));
                }
            }
            Ok(None)
        };
        let to_u32 = |(n, v): (String, u64)| {
            u32::try_from(v).map_err(|_| env_err(format!("{n}={v} is too large")))
        };
        let rank = first(&["RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"])?
            .ok_or_else(|| {
                env_err(
                    "RANK is not set (nor SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK); start \
                     the program with a launcher (torchrun, srun, mpirun, hccl::launch) or set \
                     RANK and WORLD_SIZE"
                        .to_string(),
                )
            })
            .and_then(to_u32)?;
        let world = first(&[
            "WORLD_SIZE",
            "SLURM_NTASKS",
            "OMPI_COMM_WORLD_SIZE",
            "PMI_SIZE",
        ])?
        .ok_or_else(|| {
            env_err(
                "WORLD_SIZE is not set (nor SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE)"
                    .to_string(),
            )
        })
        .and_then(to_u32)?;
        if world == 0 || rank >= world {
            return Err(env_err(format!(
                "RANK {rank} is not below WORLD_SIZE {world}"
            )));
        }
        let local = match first(&["LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"])? {
            Some(v) => to_u32(v)?,
            None => rank,
        };
        let mut c = BootstrapConfig::new(rank, world);
        c.local_rank = local;
        if let Some(a) = get("MASTER_ADDR").filter(|a| !a.trim().is_empty()) {
            c.master_addr = a.trim().to_string();
        }
        if let Some(p) = get("MASTER_PORT").filter(|p| !p.trim().is_empty()) {
            c.master_port = p
                .trim()
                .parse()
                .map_err(|_| env_err(format!("MASTER_PORT={p:?} is not a TCP port")))?;
        }
        // HCCL waits HCCL_CONNECT_TIMEOUT + 20 s for the other ranks
        // (hicann/hccl docs/zh/user_guide/hccl_env/HCCL_CONNECT_TIMEOUT.md);
        // the root-info exchange before it waits as long, unless told
        // otherwise by this crate's own variable.
        // A malformed value is an error naming the variable, not ignored.
        let secs =
            |name: &str| -> Result<Option<u64>> {
                match get(name).filter(|t| !t.trim().is_empty()) {
                    None => Ok(None),
                    Some(t) => t.trim().parse::<u64>().map(Some).map_err(|_| {
                        env_err(format!("{name}={t:?} is not a whole number of seconds"))
                    }),
                }
            };
        let connect = secs("HCCL_CONNECT_TIMEOUT")?;
        if let Some(t) = secs("HCCL_BOOTSTRAP_TIMEOUT")?.or(connect.map(|t| t.saturating_add(20))) {
            c.connect_timeout = Duration::from_secs(t);
            c.exchange_timeout = Duration::from_secs(t);
        }
        Ok(c)
    }

    fn addr(&self) -> String {
        if self.master_addr.contains(':') && !self.master_addr.starts_with('[') {
            format!("[{}]:{}", self.master_addr, self.master_port)
        } else {
            format!("{}:{}", self.master_addr, self.master_port)
        }
    }

    fn err(&self, kind: Kind, reason: impl Into<String>) -> Error {
        Error::Bootstrap {
            kind,
            rank: self.rank,
            addr: self.addr(),
            reason: reason.into(),
        }
    }
}

/// Gets the job's root info: rank 0 makes it with `make_root` and serves
/// it; the others fetch it from rank 0.
///
/// # Errors
///
/// [`Error::Bootstrap`]: [`Kind::Listen`] when rank 0 cannot listen on the
/// master address (port in use), [`Kind::Connect`] when rank 0 cannot be
/// reached within the connect timeout, [`Kind::Exchange`] when it does not
/// answer in time, [`Kind::Mismatch`] when the world sizes differ; or
/// `make_root`'s error. [`Error::InvalidArgument`] (before any network
/// access) when `cfg.rank` is not below `cfg.world_size`.
pub fn exchange_root_info(
    cfg: &BootstrapConfig,
    make_root: impl FnOnce() -> Result<RootInfo>,
) -> Result<RootInfo> {
    if cfg.rank >= cfg.world_size {
        return Err(Error::invalid(
            "exchange_root_info",
            format!(
                "rank {} is not below world_size {}",
                cfg.rank, cfg.world_size
            ),
        ));
    }
    if cfg.rank == 0 {
        serve(cfg, make_root)
    } else {
        fetch(cfg)
    }
}

/// `d` from now, or the latest instant the platform represents on the way
/// there (a timeout of `Duration::MAX` means "no deadline", not a panic).
fn deadline_after(d: Duration) -> Instant {
    let now = Instant::now();
    let mut d = d;
    loop {
        if let Some(t) = now.checked_add(d) {
            return t;
        }
        // Terminates: `now + 0` always exists.
        d /= 2;
    }
}

fn serve(cfg: &BootstrapConfig, make_root: impl FnOnce() -> Result<RootInfo>) -> Result<RootInfo> {
    let addr = cfg.addr();
    let listener = TcpListener::bind(&addr)
        .map_err(|e| cfg.err(Kind::Listen, format!("rank 0 cannot listen on {addr}: {e}")))?;
    let root = make_root()?;
    if cfg.world_size == 1 {
        return Ok(root);
    }
    let served = root.clone();
    let world = cfg.world_size;
    let deadline = deadline_after(cfg.connect_timeout.saturating_add(cfg.exchange_timeout));
    let spawned = std::thread::Builder::new()
        .name("hccl-bootstrap".to_string())
        .spawn(move || serve_loop(listener, served, world, deadline));
    if let Err(e) = spawned {
        return Err(cfg.err(
            Kind::Listen,
            format!("cannot start the bootstrap server: {e}"),
        ));
    }
    Ok(root)
}

fn serve_loop(listener: TcpListener, root: RootInfo, world: u32, deadline: Instant) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let mut served: Vec<u32> = Vec::new();
    while served.len() < world.saturating_sub(1) as usize && Instant::now() < deadline {
        let mut s = match listener.accept() {
            Ok((s, _)) => s,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
        };
        let _ = s.set_nonblocking(false);
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
        let mut req = [0u8; 16];
        if s.read_exact(&mut req).is_err() || &req[..8] != MAGIC {
            continue;
        }
        let rank = u32::from_le_bytes(req[8..12].try_into().unwrap_or_default());
        let their_world = u32::from_le_bytes(req[12..16].try_into().unwrap_or_default());
        let problem = if their_world != world {
            Some(format!(
                "rank {rank} says WORLD_SIZE is {their_world}, rank 0 says {world}"
            ))
        } else if rank == 0 || rank >= world {
            Some(format!("rank {rank} is not in 1..{world}"))
        } else if served.contains(&rank) {
            Some(format!(
                "rank {rank} asked twice (two processes with the same RANK?)"
            ))
        } else {
            None
        };
        let mut reply = Vec::with_capacity(12 + ROOT_INFO_BYTES);
        reply.extend_from_slice(MAGIC);
        match problem {
            None => {
                reply.extend_from_slice(&0u32.to_le_bytes());
                reply.extend_from_slice(root.as_bytes());
                if s.write_all(&reply).is_ok() {
                    served.push(rank);
                }
            }
            Some(p) => {
                reply.extend_from_slice(&1u32.to_le_bytes());
                reply.extend_from_slice(&(p.len() as u32).to_le_bytes());
                reply.extend_from_slice(p.as_bytes());
                let _ = s.write_all(&reply);
            }
        }
    }
}

fn fetch(cfg: &BootstrapConfig) -> Result<RootInfo> {
    let addr = cfg.addr();
    let deadline = deadline_after(cfg.connect_timeout);
    let mut last = String::from("no attempt");
    let mut s = loop {
        let targets: Vec<_> = match addr.to_socket_addrs() {
            Ok(t) => t.collect(),
            Err(e) => {
                return Err(cfg.err(Kind::Connect, format!("cannot resolve {addr}: {e}")));
            }
        };
        let mut got = None;
        for t in &targets {
            let left = deadline.saturating_duration_since(Instant::now());
            match TcpStream::connect_timeout(
                t,
                left.clamp(Duration::from_millis(10), Duration::from_secs(2)),
            ) {
                Ok(s) => {
                    got = Some(s);
                    break;
                }
                Err(e) => last = e.to_string(),
            }
        }
        if let Some(s) = got {
            break s;
        }
        if Instant::now() >= deadline {
            return Err(cfg.err(
                Kind::Connect,
                format!(
                    "rank {} could not reach rank 0 at {addr} within {:?}: {last}",
                    cfg.rank, cfg.connect_timeout
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ex = |e: std::io::Error| {
        let reason = if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            // A socket timeout reads "Resource temporarily unavailable".
            format!(
                "rank {} timed out after {} s waiting for rank 0 at {addr} to answer \
                 (HCCL_BOOTSTRAP_TIMEOUT sets the wait; is rank 0 stuck before its bootstrap?)",
                cfg.rank,
                cfg.exchange_timeout.as_secs_f64()
            )
        } else {
            format!(
                "rank {} lost the exchange with rank 0 at {addr}: {e}",
                cfg.rank
            )
        };
        cfg.err(Kind::Exchange, reason)
    };
    s.set_read_timeout(Some(cfg.exchange_timeout)).map_err(ex)?;
    s.set_write_timeout(Some(cfg.exchange_timeout))
        .map_err(ex)?;
    let mut req = Vec::with_capacity(16);
    req.extend_from_slice(MAGIC);
    req.extend_from_slice(&cfg.rank.to_le_bytes());
    req.extend_from_slice(&cfg.world_size.to_le_bytes());
    s.write_all(&req).map_err(ex)?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).map_err(ex)?;
    if &head[..8] != MAGIC {
        return Err(cfg.err(
            Kind::Mismatch,
            format!("{addr} is not an hccl bootstrap server (another program listens there?)"),
        ));
    }
    if u32::from_le_bytes(head[8..12].try_into().unwrap_or_default()) != 0 {
        let mut len = [0u8; 4];
        s.read_exact(&mut len).map_err(ex)?;
        let mut msg = vec![0u8; (u32::from_le_bytes(len) as usize).min(4096)];
        s.read_exact(&mut msg).map_err(ex)?;
        return Err(cfg.err(Kind::Mismatch, String::from_utf8_lossy(&msg).into_owned()));
    }
    let mut bytes = vec![0u8; ROOT_INFO_BYTES];
    s.read_exact(&mut bytes).map_err(ex)?;
    RootInfo::from_bytes(&bytes)
}

/// Bootstraps and creates this rank's communicator on `device`: the root
/// info exchange, then [`Comm::init_root_info`].
///
/// # Errors
///
/// As [`exchange_root_info`] and [`Comm::init_root_info`].
pub fn init_comm(device: &Device, cfg: &BootstrapConfig, config: &CommConfig) -> Result<Comm> {
    let root = exchange_root_info(cfg, || {
        device.bind()?;
        RootInfo::new()
    })?;
    Comm::init_root_info(device, &root, cfg.world_size, cfg.rank, config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn reads_torchrun_variables() {
        let c = BootstrapConfig::from_vars(vars(&[
            ("RANK", "3"),
            ("WORLD_SIZE", "8"),
            ("LOCAL_RANK", "1"),
            ("MASTER_ADDR", "10.0.0.7"),
            ("MASTER_PORT", "23456"),
        ]))
        .unwrap();
        assert_eq!((c.rank, c.world_size, c.local_rank), (3, 8, 1));
        assert_eq!(c.addr(), "10.0.0.7:23456");
    }

    #[test]
    fn falls_back_to_slurm_variables() {
        let c = BootstrapConfig::from_vars(vars(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_NTASKS", "16"),
            ("SLURM_LOCALID", "1"),
        ]))
        .unwrap();
        assert_eq!((c.rank, c.world_size, c.local_rank), (5, 16, 1));
        assert_eq!(c.addr(), "127.0.0.1:29500");
    }

    #[test]
    fn bad_environments_name_the_variable() {
        let e = BootstrapConfig::from_vars(vars(&[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("RANK is not set"), "{e}");
        let e = BootstrapConfig::from_vars(vars(&[("RANK", "x"), ("WORLD_SIZE", "2")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("RANK=\"x\" is not a whole number"), "{e}");
        let e = BootstrapConfig::from_vars(vars(&[("RANK", "2"), ("WORLD_SIZE", "2")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("RANK 2 is not below WORLD_SIZE 2"), "{e}");
    }

    /// Issue 23: a malformed timeout was ignored, and an environment error
    /// read "bootstrap of rank 0 with  failed".
    #[test]
    fn malformed_timeouts_are_errors_naming_the_variable_and_value() {
        for var in ["HCCL_BOOTSTRAP_TIMEOUT", "HCCL_CONNECT_TIMEOUT"] {
            let e = BootstrapConfig::from_vars(vars(&[
                ("RANK", "0"),
                ("WORLD_SIZE", "2"),
                (var, "abc"),
            ]))
            .unwrap_err()
            .to_string();
            assert_eq!(
                e,
                format!(
                    "bootstrap: the environment describes no rank: {var}=\"abc\" is not a whole number of seconds"
                )
            );
        }
        let e = BootstrapConfig::from_vars(vars(&[("RANK", "x"), ("WORLD_SIZE", "2")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "bootstrap: the environment describes no rank: RANK=\"x\" is not a whole number"
        );
        let c = BootstrapConfig::from_vars(vars(&[
            ("RANK", "0"),
            ("WORLD_SIZE", "2"),
            ("HCCL_CONNECT_TIMEOUT", "100"),
        ]))
        .unwrap();
        assert_eq!(c.exchange_timeout, Duration::from_secs(120));
    }

    /// Issue 23: a rank 0 that accepts but never answers made the error
    /// read "Resource temporarily unavailable (os error 11)".
    #[test]
    fn a_silent_rank_0_is_a_timeout_that_says_so() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut cfg = BootstrapConfig::new(1, 2);
        cfg.master_port = port;
        cfg.exchange_timeout = Duration::from_millis(300);
        let silent = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let e = fetch(&cfg).unwrap_err().to_string();
        drop(silent.join());
        assert_eq!(
            e,
            format!(
                "bootstrap of rank 1 with 127.0.0.1:{port} failed (Exchange): rank 1 timed out \
                 after 0.3 s waiting for rank 0 at 127.0.0.1:{port} to answer \
                 (HCCL_BOOTSTRAP_TIMEOUT sets the wait; is rank 0 stuck before its bootstrap?)"
            )
        );
    }

    #[test]
    fn a_rank_outside_the_world_is_rejected_before_the_network() {
        for (rank, world) in [(0, 0), (2, 2), (5, 3)] {
            let e = exchange_root_info(&BootstrapConfig::new(rank, world), || {
                Err(Error::invalid("test", "make_root must not run"))
            })
            .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("exchange_root_info: rank {rank} is not below world_size {world}")
            );
        }
    }

    #[test]
    fn huge_timeouts_give_a_far_deadline_instead_of_overflowing() {
        let far = deadline_after(Duration::MAX);
        assert!(far > Instant::now() + Duration::from_secs(365 * 24 * 3600));
        let near = deadline_after(Duration::from_secs(1));
        assert!(near <= Instant::now() + Duration::from_secs(1));
    }
}

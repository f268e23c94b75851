//! A local launcher, like `torchrun --nproc-per-node N`: starts N copies of
//! a program as the ranks of one job, with the environment
//! [`bootstrap`](crate::bootstrap) reads (`RANK`, `WORLD_SIZE`,
//! `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`), and
//! reports how each rank exited.
//!
//! By default, when a rank fails the others are given a grace period to
//! notice (their collectives fail on their own) and are then killed, as
//! torchrun does; a time limit kills whatever is still running. Nothing is
//! left running when [`Launcher::run`] returns, nor when the launcher
//! itself is killed (on Linux the ranks get `SIGKILL` with it).
//!
//! ```no_run
//! let exits = hccl::launch::Launcher::new("target/debug/examples/hccl_bench")
//!     .nproc(4)
//!     .args(["-b", "8K", "-e", "64M"])
//!     .run()?;
//! assert!(exits.iter().all(|e| e.success()));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::ffi::{OsStr, OsString};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How one rank ended.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankExit {
    /// The rank.
    pub rank: u32,
    /// Its exit status (`None` if it could not be waited for).
    pub status: Option<ExitStatus>,
    /// Whether the launcher killed it (time limit, or another rank failed).
    pub killed: bool,
    /// How long it ran.
    pub elapsed: Duration,
    /// Its standard output and error, when captured ([`Launcher::capture`]).
    pub output: Option<(String, String)>,
}

impl RankExit {
    /// Whether it exited by itself with status 0.
    pub fn success(&self) -> bool {
        !self.killed && self.status.is_some_and(|s| s.success())
    }
}

impl std::fmt::Display for RankExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match (&self.status, self.killed) {
            (_, true) => "killed by the launcher".to_string(),
            (Some(s), false) => s.to_string(),
            (None, false) => "not waited for".to_string(),
        };
        write!(f, "rank {}: {how} after {:.2?}", self.rank, self.elapsed)
    }
}

/// Starts the ranks of a local job.
///
/// `Send + Sync`: it holds the job's description only (program, arguments,
/// settings); the processes live inside [`Launcher::run`].
#[derive(Debug, Clone)]
pub struct Launcher {
    program: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    nproc: u32,
    master_addr: String,
    master_port: Option<u16>,
    time_limit: Option<Duration>,
    grace: Option<Duration>,
    capture: bool,
}

impl Launcher {
    /// A launcher of `program` with 1 rank, no time limit, and a 30-second
    /// grace period after a failure.
    pub fn new(program: impl Into<PathBuf>) -> Launcher {
        Launcher {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            nproc: 1,
            master_addr: "127.0.0.1".to_string(),
            master_port: None,
            time_limit: None,
            grace: Some(Duration::from_secs(30)),
            capture: false,
        }
    }

    /// The number of ranks (processes).
    pub fn nproc(mut self, n: u32) -> Launcher {
        self.nproc = n;
        self
    }

    /// Arguments given to every rank.
    pub fn args<I, S>(mut self, args: I) -> Launcher
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// An environment variable for every rank.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Launcher {
        self.envs
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// `MASTER_ADDR` (default `127.0.0.1`).
    pub fn master_addr(mut self, addr: impl Into<String>) -> Launcher {
        self.master_addr = addr.into();
        self
    }

    /// `MASTER_PORT` (default: a free port picked at [`Launcher::run`]).
    pub fn master_port(mut self, port: u16) -> Launcher {
        self.master_port = Some(port);
        self
    }

    /// Kills every rank still running after `limit`.
    pub fn time_limit(mut self, limit: Duration) -> Launcher {
        self.time_limit = Some(limit);
        self
    }

    /// After a rank fails, how long the others may go on before they are
    /// killed (`None`: let them run, up to the time limit).
    pub fn grace_after_failure(mut self, grace: Option<Duration>) -> Launcher {
        self.grace = grace;
        self
    }

    /// Captures each rank's standard output and error into [`RankExit::output`]
    /// (otherwise they are inherited).
    pub fn capture(mut self, on: bool) -> Launcher {
        self.capture = on;
        self
    }

    /// Starts the ranks and waits for all of them.
    ///
    /// # Errors
    ///
    /// The error of starting a process (the ones already started are
    /// killed and waited for first).
    pub fn run(&self) -> std::io::Result<Vec<RankExit>> {
        let port = match self.master_port {
            Some(p) => p,
            None => free_port(&self.master_addr)?,
        };
        let start = Instant::now();
        let mut children: Vec<(u32, Child, Option<RankExit>)> = Vec::new();
        for rank in 0..self.nproc {
            let mut cmd = Command::new(&self.program);
            cmd.args(&self.args)
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", self.nproc.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("LOCAL_WORLD_SIZE", self.nproc.to_string())
                .env("MASTER_ADDR", &self.master_addr)
                .env("MASTER_PORT", port.to_string())
                .stdin(Stdio::null());
            for (k, v) in &self.envs {
                cmd.env(k, v);
            }
            if self.capture {
                cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            }
            die_with_launcher(&mut cmd);
            match cmd.spawn() {
                Ok(c) => children.push((rank, c, None)),
                Err(e) => {
                    for (_, c, _) in &mut children {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                    return Err(e);
                }
            }
        }
        // Drain captured pipes on threads, so a chatty rank never blocks.
        let mut readers = Vec::new();
        for (_, c, _) in &mut children {
            let out = c.stdout.take();
            let err = c.stderr.take();
            readers.push(std::thread::spawn(move || {
                let read = |p: Option<Box<dyn std::io::Read + Send>>| {
                    let mut s = String::new();
                    if let Some(mut p) = p {
                        let mut b = Vec::new();
                        let _ = p.read_to_end(&mut b);
                        s = String::from_utf8_lossy(&b).into_owned();
                    }
                    s
                };
                (
                    read(out.map(|o| Box::new(o) as Box<dyn std::io::Read + Send>)),
                    read(err.map(|e| Box::new(e) as Box<dyn std::io::Read + Send>)),
                )
            }));
        }
        let mut failed_at: Option<Instant> = None;
        loop {
            let mut running = 0;
            for (rank, c, exit) in &mut children {
                if exit.is_some() {
                    continue;
                }
                match c.try_wait() {
                    Ok(Some(status)) => {
                        if !status.success() && failed_at.is_none() {
                            failed_at = Some(Instant::now());
                        }
                        *exit = Some(RankExit {
                            rank: *rank,
                            status: Some(status),
                            killed: false,
                            elapsed: start.elapsed(),
                            output: None,
                        });
                    }
                    Ok(None) => running += 1,
                    Err(_) => {
                        *exit = Some(RankExit {
                            rank: *rank,
                            status: None,
                            killed: false,
                            elapsed: start.elapsed(),
                            output: None,
                        });
                    }
                }
            }
            if running == 0 {
                break;
            }
            let over_time = self.time_limit.is_some_and(|l| start.elapsed() >= l);
            let over_grace = match (failed_at, self.grace) {
                (Some(t), Some(g)) => t.elapsed() >= g,
                _ => false,
            };
            if over_time || over_grace {
                for (rank, c, exit) in &mut children {
                    if exit.is_none() {
                        let _ = c.kill();
                        let status = c.wait().ok();
                        *exit = Some(RankExit {
                            rank: *rank,
                            status,
                            killed: true,
                            elapsed: start.elapsed(),
                            output: None,
                        });
                    }
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut out = Vec::with_capacity(children.len());
        for ((_, _, exit), reader) in children.into_iter().zip(readers) {
            let mut e = exit.unwrap_or(RankExit {
                rank: 0,
                status: None,
                killed: false,
                elapsed: start.elapsed(),
                output: None,
            });
            let captured = reader.join().unwrap_or_default();
            if self.capture {
                e.output = Some(captured);
            }
            out.push(e);
        }
        Ok(out)
    }
}

/// Makes the rank die with the launcher: the kernel sends it `SIGKILL`
/// when the thread that started it (the one in [`Launcher::run`], which
/// waits for every rank) ends, however the launcher ends — killed too.
/// Ranks were left running for minutes when the launcher was killed.
#[cfg(target_os = "linux")]
fn die_with_launcher(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid is async-signal-safe and has no preconditions.
    let launcher = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed: prctl and getppid are plain
    // system calls, and it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The launcher died before the request took effect: follow it.
            if libc::getppid() != launcher {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Elsewhere ranks outlive a killed launcher (no parent-death signal).
#[cfg(not(target_os = "linux"))]
fn die_with_launcher(_: &mut Command) {}

/// A TCP port that is free on `addr` right now.
///
/// # Errors
///
/// The error of binding `addr:0`.
pub fn free_port(addr: &str) -> std::io::Result<u16> {
    let l = TcpListener::bind((addr, 0))?;
    Ok(l.local_addr()?.port())
}

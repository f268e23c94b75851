//! Running `npu-smi` within bounds: a time limit per call, a cap on what it
//! may print, and no pile-up of processes that a wedged driver keeps from
//! dying.
//!
//! `npu-smi` talks to the driver; when the driver is wedged it can block for
//! ever (in the kernel, where even `SIGKILL` waits), or a broken build can
//! print without end. Each call runs in its own process group, its output is
//! read by two threads with a size cap, and at the deadline (or the cap) the
//! whole group is killed. A process that does not die at once is reaped by a
//! background thread; while [`MAX_UNREAPED`] such processes are alive, no new
//! one is started, so a wedged driver costs a bounded number of processes
//! and every later call fails at once instead of stacking up.

use crate::NpuSmiLimits;
use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Killed processes still alive beyond which no new run starts.
pub(crate) const MAX_UNREAPED: usize = 2;

/// What is kept of standard error (the rest is read and dropped).
const MAX_STDERR_BYTES: usize = 64 * 1024;

/// Runs one program with [`NpuSmiLimits`].
#[derive(Debug)]
pub(crate) struct Runner {
    program: PathBuf,
    limits: NpuSmiLimits,
    /// Killed runs whose process has not been reaped yet.
    unreaped: Arc<AtomicUsize>,
}

enum Pipe {
    Out,
    Err,
}

/// Reads `pipe` to its end, keeping at most `keep` bytes. With `fail_over`,
/// more than `keep` bytes is an error (and reading stops); without it, the
/// excess is read and dropped.
fn read_capped(mut pipe: impl Read, keep: usize, fail_over: bool) -> Result<Vec<u8>, ()> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => return Ok(kept),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A read error ends the output; the exit status says the rest.
            Err(_) => return Ok(kept),
        };
        let room = keep - kept.len();
        if n > room && fail_over {
            return Err(());
        }
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
}

/// Kills the process group of `child` (its own: see [`Runner::run`]).
fn kill_group(child: &Child) {
    let Ok(pgid) = libc::pid_t::try_from(child.id()) else {
        return;
    };
    // SAFETY: kill(2) has no memory preconditions. The group id is the pid
    // of a child this process has not reaped yet (we hold its `Child` and
    // have not seen it exit), so the id cannot name another process group.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

impl Runner {
    pub(crate) fn new(program: PathBuf, limits: NpuSmiLimits) -> Runner {
        Runner {
            program,
            limits,
            unreaped: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The command line, for messages.
    pub(crate) fn command_line(&self, args: &[&str]) -> String {
        let mut s = self.program.display().to_string();
        for a in args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    /// Runs the program with `args`; its standard output on success.
    ///
    /// # Errors
    ///
    /// - [`Error::Command`]: it could not be started, or exited non-zero (with
    ///   its standard error);
    /// - [`Error::Aborted`]: it ran past the time limit or printed more than
    ///   the output limit (and was killed), or earlier killed runs have not
    ///   ended yet (it was not started).
    pub(crate) fn run(&self, args: &[&str]) -> Result<String> {
        let command = self.command_line(args);
        let aborted = |reason: String| Error::Aborted {
            command: command.clone(),
            reason,
        };
        let unreaped = self.unreaped.load(Ordering::Acquire);
        if unreaped >= MAX_UNREAPED {
            return Err(aborted(format!(
                "not started: {unreaped} earlier runs were killed after the time limit and have \
                 not ended yet (the NPU driver may be wedged; see `dmesg`)"
            )));
        }
        let mut child = Command::new(&self.program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group, so that the deadline kills what it started too.
            .process_group(0)
            .spawn()
            .map_err(|e| Error::Command {
                command: command.clone(),
                detail: e.to_string(),
            })?;
        let (tx, rx) = mpsc::channel();
        let limit = self.limits.max_output_bytes;
        for (pipe, reader) in [
            (
                Pipe::Out,
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
            (
                Pipe::Err,
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
            ),
        ] {
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name("npu-smi-output".to_string())
                .spawn(move || {
                    let got = match (&pipe, reader) {
                        (_, None) => Ok(Vec::new()),
                        (Pipe::Out, Some(r)) => read_capped(r, limit, true),
                        (Pipe::Err, Some(r)) => read_capped(r, MAX_STDERR_BYTES, false),
                    };
                    // The caller may have given up (deadline): nobody listens.
                    let _ = tx.send((pipe, got));
                });
            if let Err(e) = spawned {
                self.abandon(child);
                return Err(aborted(format!("cannot start a thread to read it: {e}")));
            }
        }
        drop(tx);
        let deadline = Instant::now() + self.limits.timeout;
        let too_slow = || {
            format!(
                "did not finish within {} (killed; the time limit guards against a wedged driver)",
                seconds(self.limits.timeout)
            )
        };
        let (mut stdout, mut stderr) = (None, None);
        while stdout.is_none() || stderr.is_none() {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok((Pipe::Out, Ok(b))) => stdout = Some(b),
                Ok((Pipe::Err, Ok(b))) => stderr = Some(b),
                Ok((_, Err(()))) => {
                    self.abandon(child);
                    return Err(aborted(format!(
                        "printed more than {limit} bytes (killed; the output limit guards against a runaway npu-smi)"
                    )));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    self.abandon(child);
                    return Err(aborted(too_slow()));
                }
                // Both readers have reported.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        // Its output is closed: it is exiting (or a child of it keeps
        // running without the pipes; the group kill below ends that too).
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None) => {
                    self.abandon(child);
                    return Err(aborted(too_slow()));
                }
                Err(e) => {
                    self.abandon(child);
                    return Err(aborted(format!("cannot wait for it: {e}")));
                }
            }
        };
        let stdout = String::from_utf8_lossy(&stdout.unwrap_or_default()).into_owned();
        if !status.success() {
            let stderr = String::from_utf8_lossy(&stderr.unwrap_or_default()).into_owned();
            let text = if stderr.trim().is_empty() {
                stdout.trim()
            } else {
                stderr.trim()
            };
            return Err(Error::Command {
                command,
                detail: format!("{status}: {text}"),
            });
        }
        Ok(stdout)
    }

    /// Kills `child`'s group and reaps it: at once when it dies at once,
    /// else on a background thread, counted in `unreaped` until then.
    fn abandon(&self, mut child: Child) {
        kill_group(&child);
        for _ in 0..50 {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        self.unreaped.fetch_add(1, Ordering::AcqRel);
        let unreaped = Arc::clone(&self.unreaped);
        let reaper = std::thread::Builder::new()
            .name("npu-smi-reaper".to_string())
            .spawn(move || {
                let _ = child.wait();
                unreaped.fetch_sub(1, Ordering::AcqRel);
            });
        // Without a thread the process stays counted: later runs are refused
        // rather than adding to what cannot be reaped.
        drop(reaper);
    }
}

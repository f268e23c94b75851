//! Output paths of the examples that are not files (issue 23): a FIFO as
//! `train_mlp --trace` or as `CANN_SIM_TRACE` hung the program after its
//! work. Both are refused at the start, with exit status 1, and the FIFO is
//! never opened.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `target/<profile>/examples/<name>` on the simulator, with no CANN
/// variables.
fn example(name: &str) -> Command {
    // target/<profile>/deps/<this test> → target/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let mut cmd = Command::new(dir.join("examples").join(name));
    for var in ["CANN_ACL_LIB", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        cmd.env_remove(var);
    }
    cmd.env("CANN_BACKEND", "sim").stdin(Stdio::null());
    cmd
}

/// Runs `cmd` for at most 60 s: exit code (`None` when killed at the
/// deadline), standard output and error.
fn run_within(mut cmd: Command) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (code, out.join().unwrap(), err.join().unwrap())
}

fn fifo(dir: &Path) -> PathBuf {
    let path = dir.join("trace.json");
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    path
}

/// `train_mlp --trace <path>`, which must stop before training with exit
/// status 1: its standard error.
fn train_mlp_refusing(path: &Path) -> String {
    let mut cmd = example("train_mlp");
    cmd.arg("--trace").arg(path);
    let (code, out, err) = run_within(cmd);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(out, "", "nothing ran");
    err
}

#[test]
fn train_mlp_refuses_a_trace_path_that_is_a_fifo_before_training() {
    cann_sim::sim_only!(
        "the trace is the simulator's (on an NPU --trace names msprof's directory)"
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    assert_eq!(
        train_mlp_refusing(&fifo),
        format!(
            "error: --trace: {} is a FIFO, not a regular file: give the path of a file to write\n",
            fifo.display()
        )
    );
}

#[test]
fn train_mlp_refuses_a_trace_path_in_a_missing_directory_before_training() {
    cann_sim::sim_only!(
        "the trace is the simulator's (on an NPU --trace names msprof's directory)"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("trace.json");
    assert_eq!(
        train_mlp_refusing(&path),
        format!(
            "error: --trace: cannot write {}: the directory {} does not exist\n",
            path.display(),
            dir.path().join("missing").display()
        )
    );
}

#[test]
fn a_fifo_as_cann_sim_trace_stops_an_example_at_its_start() {
    cann_sim::sim_only!("CANN_SIM_TRACE is the simulator's");
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path());
    let mut cmd = example("quickstart");
    cmd.env("CANN_SIM_TRACE", &fifo);
    let (code, out, err) = run_within(cmd);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains(&format!(
            "aclInit: cann-sim configuration: CANN_SIM_TRACE={:?}: {} is a FIFO, not a regular file",
            fifo.display().to_string(),
            fifo.display()
        )),
        "{err}"
    );
}

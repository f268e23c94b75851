//! The local launcher (`hccl::launch`): its ranks never outlive it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs in a child process: launches two ranks that would sleep for five
/// minutes.
#[test]
#[ignore = "run by launcher_killed_takes_its_ranks_with_it in a child process"]
fn child_launcher() {
    let exits = hccl::launch::Launcher::new("/bin/sleep")
        .nproc(2)
        .args(["300"])
        .run()
        .unwrap();
    panic!("the ranks ended on their own: {exits:?}");
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid …: the fields after the last ')'.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        if fields.get(1).and_then(|f| f.parse::<u32>().ok()) == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// Whether `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
    }
}

/// Regression (issue 15): ranks ran ~500 s more after their launcher was
/// killed. They now get SIGKILL with it.
#[test]
#[cfg(target_os = "linux")]
fn launcher_killed_takes_its_ranks_with_it() {
    if !Path::new("/bin/sleep").exists() {
        return;
    }
    let mut launcher = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_launcher", "--include-ignored", "--quiet"])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let ranks = loop {
        let ranks = children_of(launcher.id());
        if ranks.len() == 2 || Instant::now() > deadline {
            break ranks;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    launcher.kill().unwrap();
    launcher.wait().unwrap();
    assert_eq!(ranks.len(), 2, "the launcher did not start two ranks");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ranks.iter().all(|&p| gone(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = ranks.iter().copied().filter(|&p| !gone(p)).collect();
    for &p in &left {
        // Clean up before failing.
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    assert!(left.is_empty(), "ranks {left:?} outlived their launcher");
}

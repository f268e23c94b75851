//! Ranks as separate processes: this test binary launches copies of itself
//! (the ignored `rank_entry` test, told its role by `HCCL_TEST_ROLE`) with
//! `hccl::launch`, which sets `RANK`, `WORLD_SIZE`, `MASTER_ADDR`,
//! `MASTER_PORT` as torchrun does; each rank bootstraps from the
//! environment. Covers the collective matrix on 1–8 processes (over the
//! simulator's same-host direct links, with megabyte buffers read through
//! shared mappings, and over TCP with `HCCL_INTRA_ROCE_ENABLE=1`), a
//! 16-process smoke test, the failure cases (a rank killed mid-collective on
//! either path, a stalled rank, mismatched counts, rank 0 missing, ports in
//! use, a window exchange with a rank that left), and two "hosts" in network
//! namespaces where the machine allows it.
//!
//! Every launch has a time limit, after which the launcher kills what is
//! left; every test checks that each rank exited by itself.

mod common;

use acl::{Device, Runtime};
use hccl::launch::{Launcher, RankExit};
use hccl::{BootstrapConfig, BootstrapErrorKind, CommConfig, ErrorCode, ReduceOp};
use std::time::{Duration, Instant};

const ROLE: &str = "HCCL_TEST_ROLE";

/// The exit code of a rank that saw what the scenario expects.
const OK: i32 = 0;

// ---- the rank side ---------------------------------------------------------

#[test]
#[ignore = "a rank of the multi-process tests: launched by them, does nothing alone"]
fn rank_entry() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let code = match rank_main(&role) {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("RANK-ERROR role={role}: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn setup(
    config: &CommConfig,
) -> Result<(hccl::Comm, Device, acl::Stream, BootstrapConfig), String> {
    cann_sim::install().map_err(|e| e.to_string())?;
    let rt = Runtime::init().map_err(|e| e.to_string())?;
    let cfg = BootstrapConfig::from_env().map_err(|e| e.to_string())?;
    let dev = Device::new(&rt, cfg.local_rank % 8).map_err(|e| e.to_string())?;
    let comm = hccl::init_comm(&dev, &cfg, config).map_err(|e| e.to_string())?;
    let stream = dev.new_stream().map_err(|e| e.to_string())?;
    Ok((comm, dev, stream, cfg))
}

fn short() -> CommConfig {
    CommConfig::default().exec_timeout(Duration::from_secs(3))
}

/// Queues an all-reduce of `n` f32 and synchronises; the outcome, the
/// async error, and how long it took.
fn all_reduce_outcome(
    comm: &hccl::Comm,
    s: &acl::Stream,
    n: usize,
) -> (Result<(), hccl::Error>, Option<ErrorCode>, Duration) {
    let t = Instant::now();
    let res = (|| {
        let mut buf = s.alloc_zeros::<f32>(n)?;
        comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, s)?;
        s.synchronize()?;
        Ok(())
    })();
    let async_err = comm.async_error().ok().flatten();
    (res, async_err, t.elapsed())
}

fn rank_main(role: &str) -> Result<(), String> {
    match role {
        "matrix" => {
            let (comm, dev, s, _) =
                setup(&CommConfig::default().exec_timeout(Duration::from_secs(30)))?;
            let checks = common::matrix(&comm, &dev, &s)?;
            println!("rank {} ran {checks} checks", comm.rank());
            Ok(())
        }
        "large" => {
            let (comm, dev, s, _) =
                setup(&CommConfig::default().exec_timeout(Duration::from_secs(60)))?;
            let checks = common::large(&comm, &dev, &s)?;
            println!("rank {} ran {checks} large checks", comm.rank());
            Ok(())
        }
        "exchange_peer_gone" => {
            let (comm, dev, _s, _) = setup(&short())?;
            if comm.rank() == 1 {
                // Leaves without ever exchanging.
                drop(comm);
                return Ok(());
            }
            let buf = acl::DeviceBuffer::<f32>::zeroed(&dev, 16).map_err(|e| e.to_string())?;
            let w = comm.register(&buf).map_err(|e| e.to_string())?;
            let t = Instant::now();
            match w.exchange(&[1]) {
                Err(e)
                    if e.code() == Some(ErrorCode::Remote)
                        && t.elapsed() < Duration::from_secs(5) =>
                {
                    println!("EXCHANGE-FAILED {e}");
                    Ok(())
                }
                other => Err(format!(
                    "expected HCCL_E_REMOTE within 5 s, got {other:?} after {:?}",
                    t.elapsed()
                )),
            }
        }
        "smoke" => {
            let t = Instant::now();
            let (comm, _dev, s, _) =
                setup(&CommConfig::default().exec_timeout(Duration::from_secs(30)))?;
            let ready = t.elapsed();
            let n = comm.size() as f32;
            let mut buf = s
                .clone_from_host(&[comm.rank() as f32 + 1.0; 256])
                .map_err(|e| e.to_string())?;
            comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)
                .map_err(|e| e.to_string())?;
            let got = buf.to_host_vec().map_err(|e| e.to_string())?;
            let want = n * (n + 1.0) / 2.0;
            if got.iter().any(|&x| x != want) {
                return Err(format!("all_reduce gave {:?}, want {want}", &got[..4]));
            }
            println!("READY_MS {}", ready.as_millis());
            Ok(())
        }
        "killed_mid_collective" => {
            let (comm, _dev, s, _) = setup(&short())?;
            let (first, _, _) = all_reduce_outcome(&comm, &s, 1024);
            first.map_err(|e| format!("the first all-reduce failed: {e}"))?;
            if comm.rank() == comm.size() - 1 {
                // Queue a large collective, then die while it runs.
                let mut buf = s.alloc_zeros::<f32>(4 << 20).map_err(|e| e.to_string())?;
                comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)
                    .map_err(|e| e.to_string())?;
                std::thread::sleep(Duration::from_millis(50));
                std::process::abort();
            }
            let (res, async_err, took) = all_reduce_outcome(&comm, &s, 4 << 20);
            // A peer gone is HCCL_E_REMOTE; this rank's own timeout is not
            // reported by HcclGetCommAsyncError (hicann/hcomm
            // docs/en/api_ref/comm_mgr_c/HcclGetCommAsyncError.md).
            expect_failure(res, async_err, took, &[Some(ErrorCode::Remote), None])
        }
        "stalled_rank" => {
            let (comm, _dev, s, _) = setup(&short())?;
            if comm.rank() == 1 {
                // Never joins the collective; outlives the others' timeout.
                std::thread::sleep(Duration::from_secs(5));
                return Ok(());
            }
            let (res, async_err, took) = all_reduce_outcome(&comm, &s, 64);
            // A stalled peer is a timeout at synchronisation, not an async
            // error (HcclGetCommAsyncError.md reports only error CQEs).
            expect_failure(res, async_err, took, &[None])
        }
        "stalled_rank_queued" => {
            let (comm, _dev, s, _) = setup(&short())?;
            if comm.rank() == 1 {
                // Stopped, not dead: long past three exec timeouts.
                std::thread::sleep(Duration::from_secs(12));
                return Ok(());
            }
            let t = Instant::now();
            let res = (|| {
                let mut buf = s.alloc_zeros::<f32>(64)?;
                for _ in 0..3 {
                    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, &s)?;
                }
                s.synchronize()?;
                Ok(())
            })();
            let async_err = comm.async_error().ok().flatten();
            // One exec timeout for the three queued collectives, not three.
            expect_failure(res, async_err, t.elapsed(), &[None])
        }
        "mismatched_counts" => {
            let (comm, _dev, s, _) = setup(&short())?;
            let n = if comm.rank() == 1 { 7 } else { 8 };
            let (res, async_err, took) = all_reduce_outcome(&comm, &s, n);
            // The count check is a cann-sim diagnostic (this test does not
            // mean anything on hardware).
            expect_failure(res, async_err, took, &[Some(ErrorCode::Para)])
        }
        "rank0_missing" => {
            let cfg = BootstrapConfig::from_env().map_err(|e| e.to_string())?;
            if cfg.rank == 0 {
                return Ok(()); // never serves the root info
            }
            match setup(&short()) {
                Ok(_) => Err("bootstrap succeeded without rank 0".into()),
                Err(e)
                    if e.contains("Connect")
                        && e.contains(&format!("{}:{}", cfg.master_addr, cfg.master_port)) =>
                {
                    println!("EXPECTED {e}");
                    Ok(())
                }
                Err(e) => Err(format!("unexpected error: {e}")),
            }
        }
        "master_port_in_use" => {
            // The test holds MASTER_PORT: rank 0 cannot listen, rank 1 meets
            // a server that never answers.
            let cfg = BootstrapConfig::from_env().map_err(|e| e.to_string())?;
            let addr = format!("{}:{}", cfg.master_addr, cfg.master_port);
            let want = if cfg.rank == 0 { "Listen" } else { "Exchange" };
            match setup(&short()) {
                Ok(_) => Err("bootstrap succeeded on a port in use".into()),
                Err(e) if e.contains(want) && e.contains(&addr) => {
                    println!("EXPECTED {e}");
                    Ok(())
                }
                Err(e) => Err(format!("unexpected error (wanted {want} at {addr}): {e}")),
            }
        }
        "print_root_info" => {
            cann_sim::install().map_err(|e| e.to_string())?;
            let rt = Runtime::init().map_err(|e| e.to_string())?;
            let dev = Device::new(&rt, 0).map_err(|e| e.to_string())?;
            let root = hccl::RootInfo::for_device(&dev).map_err(|e| e.to_string())?;
            println!("ROOT {}", root.to_text());
            Ok(())
        }
        "init_with_dead_root" => {
            cann_sim::install().map_err(|e| e.to_string())?;
            let rt = Runtime::init().map_err(|e| e.to_string())?;
            let dev = Device::new(&rt, 0).map_err(|e| e.to_string())?;
            let root: hccl::RootInfo = std::env::var("HCCL_TEST_ROOT")
                .map_err(|e| e.to_string())?
                .parse()
                .map_err(|e: hccl::Error| e.to_string())?;
            let t = Instant::now();
            match hccl::Comm::init_root_info(&dev, &root, 2, 1, &CommConfig::default()) {
                Ok(_) => Err("init succeeded with a dead root".into()),
                Err(e)
                    if e.code() == Some(ErrorCode::TcpConnect)
                        && e.to_string().contains("127.0.0.1:") =>
                {
                    println!("EXPECTED after {:?}: {e}", t.elapsed());
                    Ok(())
                }
                Err(e) => Err(format!("unexpected error: {e}")),
            }
        }
        "root_port_in_use" => {
            cann_sim::install().map_err(|e| e.to_string())?;
            let port = std::env::var("HCCL_IF_BASE_PORT").map_err(|e| e.to_string())?;
            let rt = Runtime::init().map_err(|e| e.to_string())?;
            let dev = Device::new(&rt, 0).map_err(|e| e.to_string())?;
            // A port in use is HCCL_E_UNAVAIL (hicann/hcomm
            // src/legacy/ascend910/platform/resource/socket/hccl_socket.cc,
            // HcclSocket::Listen, EI0019).
            match hccl::RootInfo::for_device(&dev) {
                Ok(_) => Err("HcclGetRootInfo succeeded on a port in use".into()),
                Err(e)
                    if e.code() == Some(ErrorCode::Unavail)
                        && e.to_string().contains(&format!("127.0.0.1:{port}")) =>
                {
                    println!("EXPECTED {e}");
                    Ok(())
                }
                Err(e) => Err(format!("unexpected error: {e}")),
            }
        }
        other => Err(format!("unknown role {other}")),
    }
}

fn expect_failure(
    res: Result<(), hccl::Error>,
    async_err: Option<ErrorCode>,
    took: Duration,
    codes: &[Option<ErrorCode>],
) -> Result<(), String> {
    let Err(e) = res else {
        return Err("the collective succeeded".into());
    };
    let acl = e.acl().and_then(|a| a.code()).map(|c| c.raw());
    if !codes.contains(&async_err) {
        return Err(format!(
            "async error {async_err:?}, wanted one of {codes:?}; sync error: {e}"
        ));
    }
    if !matches!(acl, Some(507048 | 507057)) {
        return Err(format!(
            "synchronize failed with {e}, wanted 507048 or 507057"
        ));
    }
    if took > Duration::from_secs(3) + Duration::from_millis(1500) {
        return Err(format!("took {took:?}, longer than the 3 s exec timeout"));
    }
    println!("EXPECTED {async_err:?} after {took:?}: {e}");
    Ok(())
}

// ---- the test side ---------------------------------------------------------

fn launcher(n: u32, role: &str) -> Launcher {
    let l = Launcher::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "rank_entry",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .nproc(n)
        .env(ROLE, role)
        .env("CANN_SIM_HCCL_CONNECT_TIMEOUT_MS", "5000")
        .env("HCCL_BOOTSTRAP_TIMEOUT", "5")
        .time_limit(cann_sim::backend::time_limit(Duration::from_secs(60)))
        .grace_after_failure(None)
        .capture(true);
    if role == "root_port_in_use" {
        // That test sets HCCL_IF_BASE_PORT, which a port range overrides.
        return l;
    }
    // Root servers on ports the OS picks (hicann/hccl
    // docs/zh/user_guide/hccl_env/HCCL_HOST_SOCKET_PORT_RANGE.md), so that
    // concurrent tests and jobs on this host never collide on HCCL's
    // default ports 60000-60031.
    l.env("HCCL_HOST_SOCKET_PORT_RANGE", "auto")
}

fn report(exits: &[RankExit]) -> String {
    exits
        .iter()
        .map(|e| {
            let (out, err) = e.output.clone().unwrap_or_default();
            format!(
                "{e}\n--- stdout\n{out}--- stderr\n{}",
                err.lines()
                    .filter(|l| !l.starts_with("running") && !l.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rest of the line after `marker` (libtest may print before it).
fn marked<'a>(out: &'a str, marker: &str) -> Option<&'a str> {
    out.lines()
        .find_map(|l| Some(&l[l.find(marker)? + marker.len()..]))
}

#[track_caller]
fn all_ok(exits: &[RankExit]) {
    assert!(exits.iter().all(RankExit::success), "{}", report(exits));
}

fn matrix(n: u32) {
    let exits = launcher(n, "matrix").run().unwrap();
    all_ok(&exits);
}

#[test]
fn every_collective_type_and_op_is_exact_on_1_process() {
    matrix(1);
}

#[test]
fn every_collective_type_and_op_is_exact_on_2_processes() {
    matrix(2);
}

#[test]
fn every_collective_type_and_op_is_exact_on_3_processes() {
    matrix(3);
}

#[test]
fn every_collective_type_and_op_is_exact_on_4_processes() {
    matrix(4);
}

#[test]
fn every_collective_type_and_op_is_exact_on_8_processes() {
    matrix(8);
}

#[test]
fn every_collective_is_exact_on_3_and_8_processes_with_intra_host_traffic_over_tcp() {
    for n in [3, 8] {
        let exits = launcher(n, "matrix")
            .env("HCCL_INTRA_ROCE_ENABLE", "1")
            .run()
            .unwrap();
        all_ok(&exits);
    }
}

#[test]
fn megabyte_collectives_are_exact_on_3_processes_reading_peers_through_shared_mappings() {
    let exits = launcher(3, "large").run().unwrap();
    all_ok(&exits);
}

#[test]
fn a_window_exchange_with_a_rank_that_left_fails_with_remote() {
    let exits = launcher(2, "exchange_peer_gone").run().unwrap();
    all_ok(&exits);
    let (out, _) = exits[0].output.clone().unwrap_or_default();
    assert!(out.contains("EXCHANGE-FAILED"), "{}", report(&exits));
}

#[test]
fn sixteen_processes_bootstrap_from_the_environment_and_all_reduce() {
    let t = Instant::now();
    let exits = launcher(16, "smoke").run().unwrap();
    all_ok(&exits);
    let ready: Vec<u64> = exits
        .iter()
        .filter_map(|e| e.output.as_ref())
        .filter_map(|(o, _)| marked(o, "READY_MS ")?.trim().parse().ok())
        .collect();
    assert_eq!(ready.len(), 16);
    println!(
        "16 ranks: slowest communicator ready {} ms after its process started; whole job {:?}",
        ready.iter().max().unwrap(),
        t.elapsed()
    );
}

#[test]
fn a_rank_killed_mid_collective_fails_the_others_with_remote_within_the_timeout() {
    killed_mid_collective(launcher(3, "killed_mid_collective"));
}

#[test]
fn a_rank_killed_mid_collective_over_tcp_fails_the_others_with_remote() {
    killed_mid_collective(launcher(3, "killed_mid_collective").env("HCCL_INTRA_ROCE_ENABLE", "1"));
}

fn killed_mid_collective(l: Launcher) {
    let exits = l.run().unwrap();
    assert!(
        exits[..2].iter().all(RankExit::success),
        "{}",
        report(&exits)
    );
    assert!(
        !exits[2].success() && !exits[2].killed,
        "{}",
        report(&exits)
    );
}

#[test]
fn a_stalled_rank_fails_the_others_with_timeout_within_the_exec_timeout() {
    let exits = launcher(3, "stalled_rank").run().unwrap();
    all_ok(&exits);
}

/// Regression (issue 15): with collectives queued behind the one that timed
/// out, a survivor waited for the stopped peer again in each of them (one
/// exec timeout per queued collective). A communicator that timed out fails
/// its later collectives at once.
#[test]
fn a_stopped_peer_costs_one_exec_timeout_however_many_collectives_are_queued() {
    let exits = launcher(3, "stalled_rank_queued").run().unwrap();
    all_ok(&exits);
}

#[test]
fn mismatched_counts_fail_every_rank_with_para() {
    cann_sim::sim_only!("relies on the simulator's cross-rank count check (a cann-sim diagnostic)");
    let exits = launcher(3, "mismatched_counts").run().unwrap();
    all_ok(&exits);
}

#[test]
fn rank0_missing_fails_bootstrap_with_connect_naming_the_address() {
    let exits = launcher(2, "rank0_missing").run().unwrap();
    all_ok(&exits);
}

#[test]
fn master_port_in_use_fails_every_rank_naming_the_address() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let exits = launcher(2, "master_port_in_use")
        .master_port(port)
        .run()
        .unwrap();
    drop(held);
    all_ok(&exits);
}

#[test]
fn hccl_init_with_an_unreachable_root_fails_with_tcp_connect_naming_it() {
    cann_sim::sim_only!("configures the simulator through CANN_SIM_* variables");
    let made = launcher(1, "print_root_info").run().unwrap();
    all_ok(&made);
    let out = &made[0].output.as_ref().unwrap().0;
    let root = marked(out, "ROOT ").expect("a root info");
    // The process that served it has exited: nothing listens there now.
    let exits = launcher(1, "init_with_dead_root")
        .env("HCCL_TEST_ROOT", root)
        .env("CANN_SIM_HCCL_CONNECT_TIMEOUT_MS", "1500")
        .run()
        .unwrap();
    all_ok(&exits);
}

#[test]
fn hccl_root_port_in_use_fails_with_unavail_naming_it() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let exits = launcher(1, "root_port_in_use")
        .env("HCCL_IF_BASE_PORT", port.to_string())
        .run()
        .unwrap();
    drop(held);
    all_ok(&exits);
}

#[test]
fn bootstrap_config_reads_what_the_launcher_sets() {
    let cfg = BootstrapConfig::from_vars(|k| match k {
        "RANK" => Some("1".into()),
        "WORLD_SIZE" => Some("2".into()),
        _ => None,
    })
    .unwrap();
    assert_eq!((cfg.rank, cfg.world_size), (1, 2));
    let e = BootstrapConfig::from_vars(|_| None).unwrap_err();
    assert!(matches!(
        e,
        hccl::Error::Bootstrap {
            kind: BootstrapErrorKind::Environment,
            ..
        }
    ));
}

/// Two network namespaces joined by a veth pair: two "hosts" with their own
/// addresses. Deleted (with the link) when dropped.
struct TwoHosts {
    names: [String; 2],
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", n])
                .status();
        }
    }
}

fn sh(args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn two_hosts(tag: u32) -> Result<(TwoHosts, [String; 2]), String> {
    let uid = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map_err(|e| format!("id: {e}"))?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root (network namespaces need CAP_SYS_ADMIN)".into());
    }
    let names = [format!("hccl-a-{tag}"), format!("hccl-b-{tag}")];
    sh(&["ip", "netns", "add", &names[0]])?;
    let hosts = TwoHosts {
        names: names.clone(),
    };
    sh(&["ip", "netns", "add", &names[1]])?;
    let (va, vb) = (
        format!("hva{}", tag % 100_000),
        format!("hvb{}", tag % 100_000),
    );
    let net = tag % 250 + 1;
    let ips = [format!("10.231.{net}.1"), format!("10.231.{net}.2")];
    sh(&[
        "ip", "link", "add", &va, "type", "veth", "peer", "name", &vb,
    ])?;
    for (i, v) in [&va, &vb].into_iter().enumerate() {
        sh(&["ip", "link", "set", v, "netns", &names[i]])?;
        sh(&[
            "ip",
            "-n",
            &names[i],
            "addr",
            "add",
            &format!("{}/24", ips[i]),
            "dev",
            v,
        ])?;
        sh(&["ip", "-n", &names[i], "link", "set", v, "up"])?;
        sh(&["ip", "-n", &names[i], "link", "set", "lo", "up"])?;
    }
    Ok((hosts, ips))
}

#[test]
fn two_hosts_in_network_namespaces_bootstrap_and_all_reduce_over_a_veth_link() {
    cann_sim::sim_only!("configures the simulator through CANN_SIM_* variables");
    let (hosts, ips) = match two_hosts(std::process::id()) {
        Ok(h) => h,
        Err(why) => {
            println!("skipped: network namespaces are not available here: {why}");
            return;
        }
    };
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<std::process::Child> = (0..2)
        .map(|rank| {
            std::process::Command::new("ip")
                .args(["netns", "exec", &hosts.names[rank]])
                .arg(&exe)
                .args([
                    "--exact",
                    "rank_entry",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(ROLE, "smoke")
                .env("RANK", rank.to_string())
                .env("WORLD_SIZE", "2")
                .env("MASTER_ADDR", &ips[0])
                .env("MASTER_PORT", "29555")
                .env("HCCL_IF_IP", &ips[rank])
                .env("HCCL_BOOTSTRAP_TIMEOUT", "10")
                .env("CANN_SIM_HCCL_CONNECT_TIMEOUT_MS", "10000")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut codes = [None; 2];
    while codes.iter().any(Option::is_none) && Instant::now() < deadline {
        for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
            if code.is_none() {
                *code = c.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for c in &mut children {
        let _ = c.kill();
    }
    let outputs: Vec<String> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
        })
        .collect();
    drop(hosts);
    for (i, code) in codes.iter().enumerate() {
        assert!(
            code.is_some_and(|c| c.success()),
            "rank {i} at {}: {code:?}\n{}",
            ips[i],
            outputs[i]
        );
    }
}

//! The simulator's HCCL held to the released library's behaviour, each test
//! citing where that behaviour was read (hicann/hcomm sources and docs,
//! hicann/hccl docs). Issue 12, "HCCL".
//!
//! HCCL reads its environment once per process, and the simulated SoC is
//! fixed per process, so the tests of variables and SoCs run a child: this
//! test binary again, filtered to one `child_*` test, with the variables
//! set (and every other `HCCL_*` variable removed). The child prints
//! `RESULT <values>` and the parent compares the line.

mod common;

use acl_sys::aclrtStream;
use cann_sim::comm::{env, wire};
use cann_sim::hccl::*;
use common::*;
use hccl_sys::{
    HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET, HCCL_DATA_TYPE_FP32, HCCL_E_AGAIN, HCCL_E_PARA,
    HCCL_E_RUNTIME, HCCL_E_UNAVAIL, HCCL_REDUCE_SUM, HCCL_SUCCESS, HcclComm, HcclCommConfig,
    HcclResult, HcclRootInfo,
};
use std::process::Command;
use std::ptr::null_mut;
use std::time::Duration;

/// The variable that tells a child what to do.
const ROLE: &str = "FIDELITY_HCCL_ROLE";

/// Runs the child test with `role` and `vars` (and no other `HCCL_*`
/// variable, no `CANN_SIM_SOC_NAME` unless given); returns its `RESULT`
/// line. Root servers listen on ports the OS picks
/// (`HCCL_HOST_SOCKET_PORT_RANGE=auto`, so that children of concurrent tests
/// never collide), unless `vars` name the ports or set
/// `FIDELITY_HCCL_DEFAULT_PORTS` (HCCL's default ports).
#[track_caller]
fn child(role: &str, vars: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        CHILD,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, _) in std::env::vars() {
        if k.starts_with("HCCL_") || k.starts_with("CANN_SIM_HCCL_") || k == "CANN_SIM_SOC_NAME" {
            cmd.env_remove(k);
        }
    }
    cmd.env(ROLE, role);
    let names_ports = vars.iter().any(|(k, _)| {
        matches!(
            *k,
            "HCCL_IF_BASE_PORT" | "HCCL_HOST_SOCKET_PORT_RANGE" | "FIDELITY_HCCL_DEFAULT_PORTS"
        )
    });
    if !names_ports {
        cmd.env("HCCL_HOST_SOCKET_PORT_RANGE", "auto");
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{role} {vars:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("{role} printed no RESULT: {stdout}"))
        .to_string()
}

/// `HcclGetRootInfo` on device 0: its code.
fn get_root_info() -> HcclResult {
    let mut r = HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    unsafe { HcclGetRootInfo(&mut r) }
}

/// A one-rank communicator on device 0 with `config` (null: none).
fn one_rank(config: Option<&HcclCommConfig>) -> Result<HcclComm, HcclResult> {
    use_device(0);
    let mut root = HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    let rc = unsafe { HcclGetRootInfo(&mut root) };
    if rc != HCCL_SUCCESS {
        return Err(rc);
    }
    let mut comm = null_mut();
    let cfg = config.map_or(std::ptr::null(), |c| c as *const _);
    // SAFETY: valid pointers for the call.
    let rc = unsafe { HcclCommInitRootInfoConfig(1, &root, 0, cfg, &mut comm) };
    if rc != HCCL_SUCCESS {
        return Err(rc);
    }
    Ok(comm)
}

/// The exec timeout a communicator got, in ms (`never` for none).
fn exec_timeout_of(comm: HcclComm) -> String {
    let c = cann_sim::comm::communicator::find(comm as usize).unwrap();
    c.exec_timeout
        .map_or_else(|| "never".to_string(), |d| d.as_millis().to_string())
}

/// Queues an in-place all-reduce of 16 f32 at `buf` (64 device bytes).
#[track_caller]
fn queue_all_reduce(comm: HcclComm, s: aclrtStream, buf: *mut u8) {
    // SAFETY: a live communicator and stream of the caller's, and 64 bytes
    // of device memory at `buf`.
    let rc = unsafe {
        HcclAllReduce(
            buf.cast(),
            buf.cast(),
            16,
            HCCL_DATA_TYPE_FP32,
            HCCL_REDUCE_SUM,
            comm,
            s,
        )
    };
    assert_eq!(rc, HCCL_SUCCESS, "{}", recent_error_or_none());
}

fn recent_error_or_none() -> String {
    let p = cann_sim::acl::aclGetRecentErrMsg();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated, valid until the next call here.
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}

fn config(exec_s: i32, expansion: u32) -> HcclCommConfig {
    let mut cfg = hccl_sys::comm_config_default();
    cfg.hcclExecTimeOut = exec_s;
    cfg.hcclOpExpansionMode = expansion;
    cfg
}

/// The child: does what `ROLE` says and prints `RESULT ...`.
#[test]
#[ignore = "run by the tests of this file in a child process"]
fn child_hccl_env() {
    let role = std::env::var(ROLE).unwrap();
    let result = match role.as_str() {
        // The code of HcclGetRootInfo.
        "root_info" => {
            use_device(0);
            get_root_info().to_string()
        }
        // Codes of HcclGetRootInfo before and after the variable named by
        // FIDELITY_HCCL_SET changes to FIDELITY_HCCL_TO.
        "read_once" => {
            use_device(0);
            let first = get_root_info();
            let name = std::env::var("FIDELITY_HCCL_SET").unwrap();
            let to = std::env::var("FIDELITY_HCCL_TO").unwrap();
            // SAFETY: the child runs one test on one thread, and the
            // simulator reads no variable concurrently here.
            unsafe { std::env::set_var(name, to) };
            format!("{first} {}", get_root_info())
        }
        // The exec timeouts (ms) of communicators: no config, then configs
        // with hcclExecTimeOut 100, -5, 0, 2000 with AIV (mode 3), unset
        // with AIV, and 2000 with AIV only (mode 4) and with the unknown
        // mode 9 (ignored).
        "exec_timeouts" => {
            let shown = |r: Result<HcclComm, HcclResult>| {
                r.map(exec_timeout_of).unwrap_or_else(|e| format!("E{e}"))
            };
            let set = |s, m| shown(one_rank(Some(&config(s, m))));
            let not_set = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
            [
                shown(one_rank(None)),
                set(100, 0),
                set(-5, 0),
                set(0, 0),
                set(2000, 3),
                set(not_set, 3),
                set(2000, 4),
                set(2000, 9),
            ]
            .join(" ")
        }
        // The port of the root info of device FIDELITY_HCCL_DEVICE.
        "root_port" => {
            let d: i32 = std::env::var("FIDELITY_HCCL_DEVICE")
                .unwrap()
                .parse()
                .unwrap();
            use_device(d);
            let mut r = HcclRootInfo::default();
            // SAFETY: a valid out-pointer.
            let rc = unsafe { HcclGetRootInfo(&mut r) };
            let blob: Vec<u8> = r.internal.iter().map(|&c| c as u8).collect();
            let port = wire::Root::decode(&blob).map_or(0, |r| r.addr.port());
            format!("{rc} {port}")
        }
        other => panic!("unknown role {other}"),
    };
    println!("RESULT {result}");
}

const CHILD: &str = "child_hccl_env";

/// `HCCL_CONNECT_TIMEOUT` is whole seconds in [120, 7200], else
/// `HCCL_E_PARA` (hicann/hcomm
/// `src/legacy/ascend910/platform/common/externalinput.cc`,
/// `ParseLinkConnTimeOut`; hicann/hccl
/// `docs/zh/user_guide/hccl_env/HCCL_CONNECT_TIMEOUT.md`). The sim used to
/// accept any positive value and default the rest silently.
#[test]
fn connect_timeout_outside_120_to_7200_is_para() {
    for (v, want) in [
        ("120", HCCL_SUCCESS),
        ("7200", HCCL_SUCCESS),
        ("119", HCCL_E_PARA),
        ("7201", HCCL_E_PARA),
        ("5", HCCL_E_PARA),
        ("0", HCCL_E_PARA),
        ("12x", HCCL_E_PARA),
        ("150.5", HCCL_E_PARA),
    ] {
        let got = child("root_info", &[("HCCL_CONNECT_TIMEOUT", v)]);
        assert_eq!(got, want.to_string(), "HCCL_CONNECT_TIMEOUT={v}");
    }
}

/// The wait is `HCCL_CONNECT_TIMEOUT` + 20 s ("实际的建链超时等待时间是该环境变量
/// 的值加上20秒", `HCCL_CONNECT_TIMEOUT.md`); default 120 s
/// (`HCCL_LINK_TIME_OUT_S`, hicann/hcomm
/// `src/legacy/ascend910/pub_inc/externalinput_pub.h`).
#[test]
fn the_connect_wait_is_the_value_plus_20_seconds() {
    let wait = |v: Option<&str>| {
        env::Env::from_vars(
            |k| {
                (k == "HCCL_CONNECT_TIMEOUT")
                    .then(|| v.map(str::to_string))
                    .flatten()
            },
            env::SocRules::Wide,
        )
        .unwrap()
        .connect_wait()
    };
    assert_eq!(wait(None), Duration::from_secs(140));
    assert_eq!(wait(Some("150")), Duration::from_secs(170));
    assert_eq!(wait(Some("7200")), Duration::from_secs(7220));
}

/// The other variables HCCL's `InitEnvVarParam` checks fail the calls that
/// read the environment too, e.g. `HCCL_RDMA_TC` not a multiple of 4, or
/// `HCCL_DETERMINISTIC=1` (it takes true, false or strict) (hicann/hcomm
/// `src/legacy/ascend910/platform/common/externalinput.cc`,
/// `ParseRDMATrafficClass`, `ParseDeterministic`, `ParseHcclSocketFamily`).
#[test]
fn other_checked_variables_are_para_when_invalid() {
    for (k, v, want) in [
        ("HCCL_RDMA_TC", "130", HCCL_E_PARA),
        ("HCCL_RDMA_TC", "132", HCCL_SUCCESS),
        ("HCCL_DETERMINISTIC", "1", HCCL_E_PARA),
        ("HCCL_DETERMINISTIC", "TRUE", HCCL_SUCCESS),
        ("HCCL_SOCKET_FAMILY", "AF_INET4", HCCL_E_PARA),
    ] {
        assert_eq!(child("root_info", &[(k, v)]), want.to_string(), "{k}={v}");
    }
}

/// Variables are read once per process: once parsed, later changes are
/// not seen; a failed parse is not kept, so fixing the variable helps
/// (`InitExternalInput` sets `initialized` only on success, hicann/hcomm
/// `src/legacy/ascend910/platform/common/externalinput.cc`).
#[test]
fn the_environment_is_read_once_per_process() {
    // HcclGetRootInfo's codes with HCCL_CONNECT_TIMEOUT=`first`, then after
    // the variable changes to `then` in the same process.
    let run = |first: &str, then: &str| {
        child(
            "read_once",
            &[
                ("HCCL_CONNECT_TIMEOUT", first),
                ("FIDELITY_HCCL_SET", "HCCL_CONNECT_TIMEOUT"),
                ("FIDELITY_HCCL_TO", then),
            ],
        )
    };
    assert_eq!(run("200", "5"), format!("{HCCL_SUCCESS} {HCCL_SUCCESS}"));
    assert_eq!(run("5", "200"), format!("{HCCL_E_PARA} {HCCL_SUCCESS}"));
}

/// `HCCL_EXEC_TIMEOUT` on 910B / 910_93: [0, 2147483647] s, 0 = never, at
/// most two decimals; anything else `HCCL_E_PARA` (`SetHccLExecTimeOut` and
/// `IsValidExecTimeOutMs`, hicann/hcomm
/// `src/legacy/ascend910/platform/common/externalinput.cc`; hicann/hccl
/// `docs/zh/user_guide/hccl_env/HCCL_EXEC_TIMEOUT.md`).
#[test]
fn exec_timeout_on_910b_is_0_to_2_pow_31_with_two_decimals() {
    for (v, want) in [
        ("0", HCCL_SUCCESS),
        ("0.05", HCCL_SUCCESS),
        ("2147483647", HCCL_SUCCESS),
        ("2147483648", HCCL_E_PARA),
        ("1.234", HCCL_E_PARA),
        ("-1", HCCL_E_PARA),
        ("1e3", HCCL_E_PARA),
    ] {
        let got = child(
            "root_info",
            &[
                ("HCCL_EXEC_TIMEOUT", v),
                ("CANN_SIM_SOC_NAME", "Ascend910B3"),
            ],
        );
        assert_eq!(got, want.to_string(), "HCCL_EXEC_TIMEOUT={v} on 910B3");
    }
}

/// Elsewhere (Atlas training and inference series) `HCCL_EXEC_TIMEOUT` is in
/// (0, 17340] s, floored to a multiple of 68 s and at least 68 s
/// (`SetHccLExecTimeOut`; `HCCL_EXEC_TIMEOUT.md`: 600 gives 544 s).
#[test]
fn exec_timeout_on_310p_is_floored_to_68_second_steps() {
    for v in ["0", "17341"] {
        let got = child(
            "root_info",
            &[
                ("HCCL_EXEC_TIMEOUT", v),
                ("CANN_SIM_SOC_NAME", "Ascend310P3"),
            ],
        );
        assert_eq!(
            got,
            HCCL_E_PARA.to_string(),
            "HCCL_EXEC_TIMEOUT={v} on 310P3"
        );
    }
    // No config: the variable; config 100 s: 68 s; -5 (invalid): ignored;
    // 0 (invalid here): ignored; AIV: the variable, capped at 1091 s.
    let got = child(
        "exec_timeouts",
        &[
            ("HCCL_EXEC_TIMEOUT", "600"),
            ("CANN_SIM_SOC_NAME", "Ascend310P3"),
        ],
    );
    assert_eq!(
        got,
        "544000 68000 544000 544000 1091000 544000 1091000 1972000"
    );
}

/// The config's `hcclExecTimeOut` wins over the variable; a value the SoC
/// does not accept is ignored with a warning, not refused
/// (`CommConfig::SetConfigExecTimeout`, hicann/hcomm
/// `src/legacy/ascend910/framework/communicator/comm_config.cc`); the AIV
/// expansion mode caps the timeout at 1091 s, 0 meaning 1091 s
/// (`GetAivTimeout`, hicann/hcomm
/// `src/legacy/ascend910/algorithm/impl/hccl_aiv.cc`), in modes 3 (AIV) and
/// 4 (AIV only); an unknown mode (9) is ignored, not refused
/// (`CommConfig::SetConfigOpExpansionMode`, `comm_config.cc`; the sim used
/// to refuse modes above 3 with `HCCL_E_PARA`). Default 1836 s.
#[test]
fn the_config_exec_timeout_wins_on_910b() {
    let got = child(
        "exec_timeouts",
        &[
            ("HCCL_EXEC_TIMEOUT", "300"),
            ("CANN_SIM_SOC_NAME", "Ascend910B3"),
        ],
    );
    assert_eq!(
        got,
        "300000 100000 300000 never 1091000 300000 1091000 2000000"
    );
    let got = child("exec_timeouts", &[("CANN_SIM_SOC_NAME", "Ascend910B3")]);
    assert_eq!(
        got,
        "1836000 100000 1836000 never 1091000 1091000 1091000 2000000"
    );
}

/// The root info's port is `HCCL_IF_BASE_PORT` + the physical device id;
/// the base port is in [1024, 65520], else `HCCL_E_PARA`; a port in use is
/// `HCCL_E_UNAVAIL` (`TopoInfoDetect::SetupServer`, hicann/hcomm
/// `src/legacy/ascend910/framework/common/src/topo/topoinfo_detect.cc`;
/// `ParseHcclIfBasePort`, `externalinput.cc`; `HcclSocket::Listen`,
/// `src/legacy/ascend910/platform/resource/socket/hccl_socket.cc`; hicann/hccl
/// `docs/zh/user_guide/hccl_env/HCCL_IF_BASE_PORT.md`). The sim used to take
/// the variable as the port itself and any free port without it.
#[test]
fn the_root_port_is_the_base_port_plus_the_physical_device() {
    // A base with 8 free ports after it.
    let base = (20000..30000)
        .step_by(97)
        .find(|&b| (b..b + 8).all(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok()))
        .unwrap();
    let b = base.to_string();
    let port = |device: &str, more: &[(&str, &str)]| {
        let mut v = vec![
            ("HCCL_IF_BASE_PORT", b.as_str()),
            ("FIDELITY_HCCL_DEVICE", device),
        ];
        v.extend_from_slice(more);
        child("root_port", &v)
    };
    assert_eq!(port("3", &[]), format!("{HCCL_SUCCESS} {}", base + 3));
    // With ASCEND_RT_VISIBLE_DEVICES=5,6, logical device 1 is physical 6.
    assert_eq!(
        port("1", &[("ASCEND_RT_VISIBLE_DEVICES", "5,6")]),
        format!("{HCCL_SUCCESS} {}", base + 6)
    );
    for bad in ["1023", "65521"] {
        assert_eq!(
            child(
                "root_port",
                &[("FIDELITY_HCCL_DEVICE", "0"), ("HCCL_IF_BASE_PORT", bad)]
            ),
            format!("{HCCL_E_PARA} 0"),
            "HCCL_IF_BASE_PORT={bad}"
        );
    }
    let held = std::net::TcpListener::bind(("127.0.0.1", base + 2)).unwrap();
    assert_eq!(port("2", &[]), format!("{HCCL_E_UNAVAIL} 0"));
    // HCCL_HOST_SOCKET_PORT_RANGE wins over the base port
    // (`HCCL_HOST_SOCKET_PORT_RANGE.md`): `auto` lets the OS pick.
    let auto = port("2", &[("HCCL_HOST_SOCKET_PORT_RANGE", "auto")]);
    assert!(
        auto.starts_with("0 ") && auto != format!("0 {}", base + 2),
        "{auto}"
    );
    drop(held);
}

/// Without `HCCL_IF_BASE_PORT` (nor a port range) the root server takes the
/// first free port of 60000–60031 (`HOST_CONTROL_BASE_PORT`, `PreemptPortManager`,
/// hicann/hcomm
/// `src/legacy/ascend910/framework/communicator/impl/resource_manager/preempt_port_manager.cc`).
#[test]
fn without_a_base_port_the_root_takes_a_free_port_of_60000_to_60031() {
    let got = child(
        "root_port",
        &[
            ("FIDELITY_HCCL_DEVICE", "0"),
            ("FIDELITY_HCCL_DEFAULT_PORTS", "1"),
        ],
    );
    let (rc, port) = got.split_once(' ').unwrap();
    let port: u16 = port.parse().unwrap();
    // All 32 ports busy on this machine is possible but would be HCCL_E_UNAVAIL.
    if rc == HCCL_E_UNAVAIL.to_string() {
        return;
    }
    assert_eq!(rc, "0");
    assert!((60000..=60031).contains(&port), "{port}");
}

/// `HcclGetRootInfo`, `HcclCommDestroy` and `HcclCommInitClusterInfo` read
/// the current device first: `HCCL_E_RUNTIME` without one
/// (`hrtGetDeviceRefresh` / `HcclDeviceRefresh` at the top of each,
/// hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`;
/// `src/legacy/ascend910/platform/common/adapter/adapter_rts.cc`).
#[test]
fn root_info_and_destroy_need_a_current_device() {
    let (root, destroy_null, cluster) = on_new_thread(|| {
        let mut r = HcclRootInfo::default();
        let mut comm = null_mut();
        // SAFETY: a valid out-pointer; null is looked up, not dereferenced;
        // a null path is checked after the device.
        unsafe {
            (
                HcclGetRootInfo(&mut r),
                HcclCommDestroy(null_mut()),
                HcclCommInitClusterInfo(std::ptr::null(), 0, &mut comm),
            )
        }
    });
    assert_eq!(
        (root, destroy_null, cluster),
        (HCCL_E_RUNTIME, HCCL_E_RUNTIME, HCCL_E_RUNTIME)
    );
    let comm = one_rank(None).unwrap() as usize;
    let on_other_thread = on_new_thread(move || {
        // SAFETY: handles are looked up, not dereferenced.
        unsafe { HcclCommDestroy(comm as HcclComm) }
    });
    assert_eq!(on_other_thread, HCCL_E_RUNTIME);
    // SAFETY: as above; this thread has a device.
    assert_eq!(unsafe { HcclCommDestroy(comm as HcclComm) }, HCCL_SUCCESS);
}

/// A null communicator is success ("An empty comm given, skip destroy",
/// `HcclCommDestroy` in hicann/hcomm
/// `src/legacy/ascend910/framework/op_base/src/op_base.cc`).
#[test]
fn destroying_a_null_communicator_succeeds() {
    use_device(0);
    // SAFETY: null is checked, not dereferenced.
    assert_eq!(unsafe { HcclCommDestroy(null_mut()) }, HCCL_SUCCESS);
}

/// A communicator another thread is calling into (HCCL marks it
/// `HcclCommState::INUSE` with a `StateGuard` for the host-side part of every
/// collective, send and receive) is `HCCL_E_AGAIN`; queued work that has not
/// run yet does not make it in use, so destroying it then succeeds
/// (`HcclCommDestroy`, "comm is in use, please try again later", and the
/// collectives' `StateGuard`s in hicann/hcomm
/// `src/legacy/ascend910/framework/op_base/src/op_base.cc` and
/// `op_base_host.cc`; hicann/hcomm `docs/en/api_ref/comm_mgr_c/HcclCommDestroy.md`).
#[test]
fn a_communicator_in_use_is_again_and_queued_work_is_not_use() {
    let comm = one_rank(None).unwrap();
    let c = cann_sim::comm::communicator::find(comm as usize).unwrap();
    let busy = c.enter();
    let msg = {
        // SAFETY: handles are looked up, not dereferenced.
        let rc = unsafe { HcclCommDestroy(comm) };
        assert_eq!(rc, HCCL_E_AGAIN);
        recent_error()
    };
    assert_contains(&msg, "in use");
    drop(busy);
    drop(c);
    // Queued, not run: a blocked stream holds an all-reduce.
    let s: aclrtStream = create_stream();
    let gate = block_stream(s);
    let buf = malloc(64);
    queue_all_reduce(comm, s, buf);
    // SAFETY: as above.
    assert_eq!(unsafe { HcclCommDestroy(comm) }, HCCL_SUCCESS);
    drop(gate);
    ok(sync(s));
    free(buf);
    destroy_stream(s);
}

/// `HcclGetCommAsyncError` reports only error CQEs (`HCCL_E_REMOTE`) and
/// operation inconsistencies (`HCCL_E_PARA`); a timed-out collective is not
/// reported there, on the rank that timed out nor on its peer, only by the
/// stream's synchronisation (507048) (hicann/hcomm
/// `docs/en/api_ref/comm_mgr_c/HcclGetCommAsyncError.md`: "In the current
/// version, only the HCCL_E_REMOTE error type is returned"). The sim used to
/// report `HCCL_E_TIMEOUT` there.
#[test]
fn async_error_does_not_report_timeouts() {
    use_device(0);
    let mut root = HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { HcclGetRootInfo(&mut root) }, HCCL_SUCCESS);
    let cfg = config(1, 0);
    let (timed_out_tx, timed_out_rx) = std::sync::mpsc::channel::<()>();
    let timed_out_rx = std::sync::Mutex::new(timed_out_rx);
    std::thread::scope(|scope| {
        let ranks: Vec<_> = (0..2u32)
            .map(|r| {
                let (tx, rx) = (timed_out_tx.clone(), &timed_out_rx);
                scope.spawn(move || {
                    use_device(r as i32);
                    let mut comm = null_mut();
                    // SAFETY: valid pointers for the call.
                    let rc = unsafe { HcclCommInitRootInfoConfig(2, &root, r, &cfg, &mut comm) };
                    assert_eq!(rc, HCCL_SUCCESS);
                    let s = create_stream();
                    let buf = malloc(64);
                    if r == 0 {
                        // Rank 1 never calls it: rank 0 times out after 1 s.
                        queue_all_reduce(comm, s, buf);
                        assert_eq!(
                            sync(s),
                            rc_of(acl_sys::ACL_ERROR_RT_FFTS_PLUS_TIMEOUT),
                            "{}",
                            recent_error()
                        );
                        tx.send(()).unwrap();
                    } else {
                        rx.lock().unwrap().recv().unwrap();
                        // Let rank 0's abort arrive.
                        std::thread::sleep(Duration::from_millis(300));
                    }
                    let mut async_err: HcclResult = 0;
                    // SAFETY: a valid out-pointer; the handle is looked up.
                    assert_eq!(unsafe { HcclGetCommAsyncError(comm, &mut async_err) }, 0);
                    // SAFETY: a live handle of this thread's device.
                    assert_eq!(unsafe { HcclCommDestroy(comm) }, HCCL_SUCCESS);
                    free(buf);
                    destroy_stream(s);
                    async_err
                })
            })
            .collect();
        let got: Vec<HcclResult> = ranks.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(got, [HCCL_SUCCESS, HCCL_SUCCESS]);
    });
}

fn rc_of(code: u32) -> acl_sys::aclError {
    code as acl_sys::aclError
}

/// Newer headers add `HCCL_E_IN_STATUS` = 1041 (hicann/hcomm
/// `include/hccl/hccl_types.h`): the simulator names it, and codes it does
/// not know get "unknown error", never another code's text.
#[test]
fn hccl_e_in_status_is_named() {
    let text = |c| {
        // SAFETY: HcclGetErrorString returns a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(HcclGetErrorString(c)) }
            .to_string_lossy()
            .into_owned()
    };
    assert_eq!(code_name(1041), "HCCL_E_IN_STATUS");
    assert_eq!(text(1041), "The error information is in the status.");
    assert_eq!(text(1042), "unknown error");
}

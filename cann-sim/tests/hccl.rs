//! The simulator's HCCL through its C functions: ranks as threads of this
//! process (direct same-host links; TCP under `HCCL_INTRA_ROCE_ENABLE=1`). (The safe crate's tests in `hccl/tests/`
//! cover every collective and type, in-process and multi-process.)

mod common;

use acl_sys::{ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, aclrtStream};
use cann_sim::acl::*;
use cann_sim::check::{self, Kind, Mode};
use cann_sim::hccl::*;
use common::*;
use hccl_sys::{
    HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT32, HCCL_E_PARA, HCCL_E_PTR, HCCL_REDUCE_SUM,
    HCCL_SUCCESS, HcclComm, HcclCommConfig, HcclResult, HcclRootInfo,
};
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Arc;

#[track_caller]
fn hok(rc: HcclResult) {
    if rc != HCCL_SUCCESS {
        panic!("expected HCCL_SUCCESS, got {rc}: {}", recent_error());
    }
}

#[track_caller]
fn hfails(rc: HcclResult, want: HcclResult, function: &str) -> String {
    assert_eq!(rc, want, "{function} returned {rc}, expected {want}");
    let msg = recent_error();
    assert!(msg.starts_with(function), "{msg}");
    msg
}

fn root_info() -> HcclRootInfo {
    // HcclGetRootInfo needs a current device (see fidelity_hccl.rs).
    use_device(0);
    let mut r = HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    hok(unsafe { HcclGetRootInfo(&mut r) });
    r
}

/// Runs `body(rank, comm, stream)` on `n` threads, rank r on device r % 8.
fn ranks<T: Send + 'static>(
    n: u32,
    config: Option<HcclCommConfig>,
    body: impl Fn(u32, HcclComm, aclrtStream) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let root = root_info();
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|r| {
            let body = body.clone();
            std::thread::spawn(move || {
                use_device((r % 8) as i32);
                let mut comm = null_mut();
                let cfg = config.as_ref().map_or(std::ptr::null(), |c| c as *const _);
                // SAFETY: valid pointers for the call.
                hok(unsafe { HcclCommInitRootInfoConfig(n, &root, r, cfg, &mut comm) });
                let mut s: aclrtStream = null_mut();
                // SAFETY: a valid out-pointer.
                ok(unsafe { aclrtCreateStream(&mut s) });
                let out = body(r, comm, s);
                // SAFETY: live handles.
                ok(unsafe { aclrtDestroyStream(s) });
                // SAFETY: a live communicator.
                hok(unsafe { HcclCommDestroy(comm) });
                out
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn upload<T: Copy>(data: &[T]) -> *mut c_void {
    let bytes = std::mem::size_of_val(data).max(1);
    let p = malloc(bytes).cast::<c_void>();
    if !data.is_empty() {
        // SAFETY: device memory of `bytes` bytes and a host slice of the same size.
        ok(unsafe {
            aclrtMemcpy(
                p,
                bytes,
                data.as_ptr().cast(),
                bytes,
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        });
    }
    p
}

fn download<T: Copy + Default>(p: *const c_void, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let bytes = std::mem::size_of_val(&out[..]);
    // SAFETY: as above.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            bytes,
            p,
            bytes,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    out
}

#[test]
fn all_reduce_sums_across_four_thread_ranks() {
    let results = ranks(4, None, |r, comm, s| {
        let data: Vec<f32> = (0..1000).map(|i| (i * (r + 1)) as f32).collect();
        let send = upload(&data);
        let recv = upload(&vec![0f32; 1000]);
        // SAFETY: device buffers of 1000 f32 on this rank's device.
        hok(unsafe {
            HcclAllReduce(
                send,
                recv,
                1000,
                HCCL_DATA_TYPE_FP32,
                HCCL_REDUCE_SUM,
                comm,
                s,
            )
        });
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(s) });
        let out: Vec<f32> = download(recv, 1000);
        // SAFETY: allocations of this test.
        unsafe {
            ok(aclrtFree(send));
            ok(aclrtFree(recv));
        }
        out
    });
    let want: Vec<f32> = (0..1000).map(|i| (i * 10) as f32).collect();
    for out in results {
        assert_eq!(out, want);
    }
}

#[test]
fn mismatched_counts_fail_on_every_rank_with_para() {
    let mut cfg = hccl_sys::comm_config_default();
    cfg.hcclExecTimeOut = 5;
    let results = ranks(3, Some(cfg), |r, comm, s| {
        let count = if r == 1 { 7 } else { 8 };
        let send = upload(&[1i32; 8]);
        // SAFETY: device buffers of at least `count` i32.
        hok(unsafe {
            HcclAllReduce(
                send,
                send,
                count,
                HCCL_DATA_TYPE_INT32,
                HCCL_REDUCE_SUM,
                comm,
                s,
            )
        });
        // SAFETY: a live stream.
        let rc = unsafe { aclrtSynchronizeStream(s) };
        let msg = if rc != 0 {
            recent_error()
        } else {
            String::new()
        };
        let mut err = 0;
        // SAFETY: live handle, valid out-pointer.
        hok(unsafe { HcclGetCommAsyncError(comm, &mut err) });
        // SAFETY: an allocation of this test.
        ok(unsafe { aclrtFree(send) });
        (rc, err, msg)
    });
    for (rc, err, msg) in results {
        assert_eq!(
            rc,
            acl_sys::ACL_ERROR_RT_SUSPECT_REMOTE_ERROR as i32,
            "{msg}"
        );
        assert_eq!(err, HCCL_E_PARA, "{msg}");
        assert_contains(&msg, "count 7");
    }
}

#[test]
fn null_and_unknown_handles_get_hccl_codes() {
    use_device(0);
    hfails(
        // SAFETY: null is checked.
        unsafe { HcclGetRootInfo(null_mut()) },
        HCCL_E_PTR,
        "HcclGetRootInfo",
    );
    let mut n = 0;
    let bogus = 0x1234usize as HcclComm;
    // SAFETY: handles are looked up, not dereferenced.
    let msg = hfails(
        unsafe { HcclGetRankSize(bogus, &mut n) },
        HCCL_E_PARA,
        "HcclGetRankSize",
    );
    assert_contains(&msg, "not a communicator handle");
}

#[test]
fn thread_ranks_all_reduce_over_direct_links() {
    let before = cann_sim::comm::algo::runs();
    all_reduce_sums_across_four_thread_ranks();
    let after = cann_sim::comm::algo::runs();
    assert!(
        after.direct >= before.direct + 4,
        "{before:?} -> {after:?}: the four ranks did not use direct links"
    );
}

/// Runs the ignored test `name` of this binary in a child process with the
/// variables `env`; returns its output.
fn child(name: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        name,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .envs(env.iter().copied());
    run_child(name, cmd)
}

/// Runs `cmd` (a child running test `name`); asserts it succeeded and
/// returns its output.
fn run_child(name: &str, mut cmd: std::process::Command) -> String {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{name} failed:\n{text}");
    text
}

#[test]
fn intra_roce_enable_sends_same_host_ranks_over_tcp() {
    let out = child("child_all_reduce_path", &[("HCCL_INTRA_ROCE_ENABLE", "1")]);
    assert_contains(&out, "PATH direct=0 tcp=4");
}

#[test]
fn intra_pcie_and_roce_both_enabled_is_refused_with_para() {
    let out = child(
        "child_all_reduce_path",
        &[
            ("HCCL_INTRA_ROCE_ENABLE", "1"),
            ("HCCL_INTRA_PCIE_ENABLE", "1"),
        ],
    );
    assert_contains(&out, &format!("INIT {HCCL_E_PARA}:"));
    assert_contains(&out, "not a supported combination");
}

/// Child of the two tests above: what path an all-reduce of 4 thread ranks
/// takes under the variables it was started with.
#[test]
#[ignore = "run by the tests above in a child process with HCCL_INTRA_* set"]
fn child_all_reduce_path() {
    if std::env::var("HCCL_INTRA_PCIE_ENABLE").as_deref() == Ok("1") {
        let root = root_info();
        use_device(0);
        let mut comm = null_mut();
        // SAFETY: valid pointers for the call.
        let rc = unsafe { HcclCommInitRootInfo(1, &root, 0, &mut comm) };
        println!("INIT {rc}: {}", recent_error());
        return;
    }
    all_reduce_sums_across_four_thread_ranks();
    let runs = cann_sim::comm::algo::runs();
    println!("PATH direct={} tcp={}", runs.direct, runs.tcp);
}

#[test]
fn in_place_all_to_all_of_megabytes_is_exact_on_four_thread_ranks() {
    // send == recv: the direct links would overwrite blocks peers still
    // read, so such a call must take the TCP path (which sends first).
    const CNT: usize = 1 << 18;
    let before = cann_sim::comm::algo::runs();
    let results = ranks(4, None, |r, comm, s| {
        let data: Vec<i32> = (0..4 * CNT)
            .map(|k| (r as usize * 1000 + k / CNT) as i32)
            .collect();
        let buf = upload(&data);
        // SAFETY: a device buffer of 4 × CNT i32 on this rank's device.
        hok(unsafe {
            HcclAlltoAll(
                buf,
                CNT as u64,
                HCCL_DATA_TYPE_INT32,
                buf,
                CNT as u64,
                HCCL_DATA_TYPE_INT32,
                comm,
                s,
            )
        });
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(s) });
        let out: Vec<i32> = download(buf, 4 * CNT);
        // SAFETY: an allocation of this test.
        ok(unsafe { aclrtFree(buf) });
        (r, out)
    });
    for (r, out) in results {
        let bad = (0..4 * CNT)
            .filter(|&k| out[k] != ((k / CNT) * 1000 + r as usize) as i32)
            .count();
        assert_eq!(bad, 0, "rank {r}: {bad} wrong elements");
    }
    let after = cann_sim::comm::algo::runs();
    assert!(after.tcp >= before.tcp + 4, "{before:?} -> {after:?}");
}

#[test]
fn large_device_blocks_leave_descriptors_for_hccl_under_a_low_limit() {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(format!(
        "ulimit -n 64 && exec '{}' --exact child_many_large_blocks --ignored --nocapture",
        exe.display()
    ));
    let text = run_child("child_many_large_blocks", cmd);
    assert_contains(&text, "BLOCKS 80 ROOT 0");
}

/// Child of the test above: 80 device blocks of 2 MiB under a limit of 64
/// descriptors, then a root info (which needs a listening socket).
#[test]
#[ignore = "run by the test above in a child process with `ulimit -n 64`"]
fn child_many_large_blocks() {
    use_device(0);
    let blocks: Vec<*mut u8> = (0..80).map(|_| malloc(2 << 20)).collect();
    let mut r = HcclRootInfo::default();
    // SAFETY: a valid out-pointer.
    let rc = unsafe { HcclGetRootInfo(&mut r) };
    println!("BLOCKS {} ROOT {rc}", blocks.len());
    for p in blocks {
        free(p);
    }
}

#[test]
fn all_reduce_over_a_buffer_spanning_two_virtual_memory_mappings() {
    use acl_sys::{ACL_MEM_LOCATION_TYPE_DEVICE, aclrtPhysicalMemProp};
    const G: usize = cann_sim::vmm::GRANULARITY;
    let results = ranks(2, None, |r, comm, s| {
        let mut va = null_mut();
        // SAFETY: valid out-pointers and plain data throughout.
        let (ha, hb) = unsafe {
            ok(aclrtReserveMemAddress(&mut va, 2 * G, 0, null_mut(), 0));
            let mut prop: aclrtPhysicalMemProp = std::mem::zeroed();
            prop.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = r;
            let (mut ha, mut hb) = (null_mut(), null_mut());
            ok(aclrtMallocPhysical(&mut ha, G, &prop, 0));
            ok(aclrtMallocPhysical(&mut hb, G, &prop, 0));
            ok(aclrtMapMem(va, G, 0, ha, 0));
            ok(aclrtMapMem(va.cast::<u8>().add(G).cast(), G, 0, hb, 0));
            (ha, hb)
        };
        let n = 2 * G / 4;
        let data: Vec<i32> = (0..n).map(|i| (i % 1000) as i32 * (r as i32 + 1)).collect();
        // SAFETY: the mapped range holds 2 G bytes of device memory.
        ok(unsafe {
            aclrtMemcpy(
                va,
                2 * G,
                data.as_ptr().cast(),
                2 * G,
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        });
        // SAFETY: device memory of n i32 on this rank's device, in place.
        hok(unsafe {
            HcclAllReduce(
                va,
                va,
                n as u64,
                HCCL_DATA_TYPE_INT32,
                HCCL_REDUCE_SUM,
                comm,
                s,
            )
        });
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(s) });
        let out: Vec<i32> = download(va, n);
        // SAFETY: live handles, unmapped before being freed.
        unsafe {
            ok(aclrtUnmapMem(va));
            ok(aclrtUnmapMem(va.cast::<u8>().add(G).cast()));
            ok(aclrtFreePhysical(ha));
            ok(aclrtFreePhysical(hb));
            ok(aclrtReleaseMemAddress(va));
        }
        out
    });
    for out in results {
        let bad = out
            .iter()
            .enumerate()
            .filter(|&(i, &v)| v != (i % 1000) as i32 * 3)
            .count();
        assert_eq!(bad, 0);
    }
}

/// Both ranks send to each other over direct links (their senders wait for
/// the receiver to read) and both receives fail (the receive buffer is
/// freed before the batch runs, with the check off: in a child process):
/// each must tell the other's send not to wait, instead of both waiting for
/// the exec timeout (60 s here). With the check on, the frees are refused
/// and the batches exchange their data.
#[test]
fn a_batch_whose_receive_fails_releases_its_direct_link_senders_at_once() {
    use hccl_sys::{HCCL_RECV, HCCL_SEND, HcclSendRecvItem};
    let mode = check_mode_with_off_in_a_child(
        "a_batch_whose_receive_fails_releases_its_direct_link_senders_at_once",
    );
    let reports = count_reports();
    let mut cfg = hccl_sys::comm_config_default();
    cfg.hcclExecTimeOut = 60;
    let results = ranks(2, Some(cfg), move |r, comm, s| {
        let send = upload(&[r as i32; 64]);
        let recv = upload(&[0i32; 64]);
        let mut items = [
            HcclSendRecvItem {
                sendRecvType: HCCL_SEND,
                buf: send,
                count: 64,
                dataType: HCCL_DATA_TYPE_INT32,
                remoteRank: 1 - r,
            },
            HcclSendRecvItem {
                sendRecvType: HCCL_RECV,
                buf: recv,
                count: 64,
                dataType: HCCL_DATA_TYPE_INT32,
                remoteRank: 1 - r,
            },
        ];
        let release = block_stream(s);
        // SAFETY: two valid items on live device buffers.
        hok(unsafe { HcclBatchSendRecv(items.as_mut_ptr(), 2, comm, s) });
        // SAFETY: an allocation of this test, freed while the batch waits.
        let freed = unsafe { aclrtFree(recv) };
        if mode == Mode::Off {
            ok(freed);
        } else {
            let msg = assert_free_refused(
                freed,
                "aclrtFree",
                recv.cast(),
                "HcclBatchSendRecv task #2",
                s,
                &format!(
                    "writes {} of device memory on device {r}, item receive buffer)",
                    byte_range(recv.cast(), 256)
                ),
            );
            assert!(
                check::reports()
                    .recent
                    .iter()
                    .any(|r| r.kind == Kind::FreeWhilePending && r.message == msg),
                "{msg}"
            );
        }
        let t = std::time::Instant::now();
        release.send(()).unwrap();
        // SAFETY: a live stream.
        let rc = unsafe { aclrtSynchronizeStream(s) };
        let took = t.elapsed();
        let msg = if rc == 0 {
            String::new()
        } else {
            recent_error()
        };
        let received = if mode == Mode::Off {
            Vec::new()
        } else {
            let v = download::<i32>(recv, 64);
            // SAFETY: an allocation of this test, no longer used.
            ok(unsafe { aclrtFree(recv) });
            v
        };
        // SAFETY: an allocation of this test.
        ok(unsafe { aclrtFree(send) });
        (rc, took, msg, received)
    });
    for (r, (rc, took, msg, received)) in results.into_iter().enumerate() {
        if mode == Mode::Off {
            assert_ne!(rc, 0, "the batch must fail");
            assert!(
                took < std::time::Duration::from_secs(10),
                "took {took:?}: {msg}"
            );
        } else {
            assert_eq!(rc, 0, "{msg}");
            assert_eq!(
                received,
                vec![1 - r as i32; 64],
                "rank {r} received its peer's data"
            );
        }
    }
    assert_eq!(reports.made(), if mode == Mode::Off { 0 } else { 2 });
}

/// Rank 0's stream stops on a failure (memory freed under a queued fill,
/// with the check off: in a child process) and skips its all-reduce: the
/// peer's all-reduce must fail at once, not at the exec timeout (60 s
/// here). With the check on, the free is refused and both all-reduces run.
#[test]
fn a_collective_skipped_by_a_stopped_stream_fails_its_peers_at_once() {
    let mode = check_mode_with_off_in_a_child(
        "a_collective_skipped_by_a_stopped_stream_fails_its_peers_at_once",
    );
    let reports = count_reports();
    let mut cfg = hccl_sys::comm_config_default();
    cfg.hcclExecTimeOut = 60;
    let results = ranks(2, Some(cfg), move |r, comm, s| {
        let buf = upload(&[1.0f32; 16]);
        if r == 0 {
            // SAFETY: a live stream.
            ok(unsafe { aclrtSetStreamFailureMode(s, u64::from(acl_sys::ACL_STOP_ON_FAILURE)) });
            let doomed = malloc(64);
            let release = block_stream(s);
            // SAFETY: a live device range, freed below before the fill runs.
            ok(unsafe { aclrtMemsetAsync(doomed.cast(), 64, 0, 64, s) });
            // SAFETY: looked up by the simulator.
            let freed = unsafe { aclrtFree(doomed.cast()) };
            if mode == Mode::Off {
                ok(freed);
            } else {
                let msg = assert_free_refused(
                    freed,
                    "aclrtFree",
                    doomed,
                    "aclrtMemsetAsync task #2",
                    s,
                    &format!(
                        "writes {} of device memory on device 0, devPtr)",
                        byte_range(doomed, 64)
                    ),
                );
                let last = check::reports().recent.last().cloned();
                assert_eq!(
                    last.map(|r| (r.kind, r.message)),
                    Some((Kind::FreeWhilePending, msg))
                );
            }
            // SAFETY: device buffers of 16 f32 on this rank's device.
            hok(unsafe {
                HcclAllReduce(buf, buf, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s)
            });
            release.send(()).unwrap();
            if mode != Mode::Off {
                // SAFETY: a live stream.
                ok(unsafe { aclrtSynchronizeStream(s) });
                free(doomed);
            }
        } else {
            // SAFETY: as above.
            hok(unsafe {
                HcclAllReduce(buf, buf, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s)
            });
        }
        let t = std::time::Instant::now();
        // SAFETY: a live stream.
        let rc = unsafe { aclrtSynchronizeStream(s) };
        let (took, msg) = (
            t.elapsed(),
            if rc == 0 {
                String::new()
            } else {
                recent_error()
            },
        );
        let sum = download::<f32>(buf, 16);
        // SAFETY: an allocation of this test.
        ok(unsafe { aclrtFree(buf) });
        (rc, took, msg, sum)
    });
    let (rc0, _, msg0, sum0) = &results[0];
    let (rc1, took1, msg1, sum1) = &results[1];
    if mode == Mode::Off {
        assert_eq!(*rc0, acl_sys::ACL_ERROR_RT_SYS_DMA as i32, "{msg0}");
        assert_contains(msg0, "skipped");
        assert_ne!(*rc1, 0, "the peer's all-reduce must fail");
        assert!(
            *took1 < std::time::Duration::from_secs(10),
            "took {took1:?}: {msg1}"
        );
    } else {
        assert_eq!((*rc0, *rc1), (0, 0), "{msg0} / {msg1}");
        assert_eq!(sum0, &vec![2.0f32; 16]);
        assert_eq!(sum1, &vec![2.0f32; 16]);
    }
    assert_eq!(reports.made(), u64::from(mode != Mode::Off));
}

//! The safe API around the collectives (the Send/Sync decisions are in
//! `send_sync.rs`): the argument checks made before HCCL (with their exact
//! errors), the other ways to make communicators (all devices of a process,
//! rank tables, sub-communicators), suspend/resume, async errors and clean
//! teardown.

mod common;

use acl::{Device, DeviceBuffer};
use common::{runtime, serial, threads};
use hccl::{Comm, CommConfig, Error, ErrorCode, RankTable, ReduceOp, RootInfo};
use std::time::Duration;

fn invalid(r: hccl::Result<()>) -> String {
    match r {
        Err(Error::InvalidArgument { function, reason }) => format!("{function}: {reason}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn lengths_streams_and_ranks_are_checked_before_hccl_with_exact_errors() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let out = threads(2, CommConfig::default(), |comm, dev, s| {
        let send = s.alloc_zeros::<f32>(4).unwrap();
        let mut recv = s.alloc_zeros::<f32>(7).unwrap();
        let a = invalid(comm.all_gather(&send, &mut recv, s));
        let b = invalid(comm.all_reduce(&send, &mut recv, ReduceOp::Sum, s));
        let c = invalid(comm.reduce_scatter(
            &recv,
            &mut s.alloc_zeros::<f32>(4).unwrap(),
            ReduceOp::Sum,
            s,
        ));
        let d = invalid(comm.broadcast(&mut recv, 2, s));
        let e = invalid(comm.send(&send, comm.rank(), s));
        let f = invalid(comm.all_reduce_in_place(&mut recv, ReduceOp::Sum, &dev.default_stream()));
        let g = invalid(comm.all_to_all(
            &send.slice(..3).unwrap(),
            &mut recv.slice_mut(..3).unwrap(),
            s,
        ));
        let h = if comm.rank() == 0 {
            invalid(comm.reduce::<f32, DeviceBuffer<f32>>(&send, None, ReduceOp::Sum, 0, s))
        } else {
            invalid(comm.reduce(&send, Some(&mut recv), ReduceOp::Sum, 0, s))
        };
        s.synchronize().unwrap();
        (a, b, c, d, e, f, g, h)
    });
    let (a, b, c, d, e, f, g, _) = &out[0];
    assert_eq!(
        a,
        "Comm::all_gather: recv has 7 elements, but needs 8 (send × ranks = 4 × 2)"
    );
    assert_eq!(
        b,
        "Comm::all_reduce: recv has 7 elements, but needs 4 (the length of send)"
    );
    assert_eq!(
        c,
        "Comm::reduce_scatter: send has 7 elements, but needs 8 (recv × ranks = 4 × 2)"
    );
    assert_eq!(
        d,
        "Comm::broadcast: root 2 is not a rank of the communicator (0..2)"
    );
    assert_eq!(
        e,
        "Comm::send: peer 0 must be another rank of the communicator (0..2, not 0)"
    );
    assert!(
        f.starts_with("Comm::all_reduce_in_place: collectives need a created stream"),
        "{f}"
    );
    assert_eq!(
        g,
        "Comm::all_to_all: send has 3 elements, not a multiple of the 2 ranks"
    );
    assert_eq!(out[0].7, "Comm::reduce: the root must pass a recv buffer");
    assert_eq!(out[1].7, "Comm::reduce: only the root passes a recv buffer");
}

#[test]
fn all_to_all_vc_matrix_whose_sums_overflow_is_rejected_before_hccl() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let out = threads(2, CommConfig::default(), |comm, _dev, s| {
        let send = s.alloc_zeros::<f32>(4).unwrap();
        let mut recv = s.alloc_zeros::<f32>(4).unwrap();
        // Every row overflows: rank i sends u64::MAX + 1 elements.
        let rows = invalid(comm.all_to_all_vc(&send, &[u64::MAX, 1, u64::MAX, 1], &mut recv, s));
        // Rows fit, column 0 overflows: rank 0 receives u64::MAX + 1.
        let col = if comm.rank() == 0 {
            invalid(comm.all_to_all_vc(&send, &[u64::MAX, 0, 1, 0], &mut recv, s))
        } else {
            String::new()
        };
        let size = invalid(comm.all_to_all_vc(&send, &[1, 1, 1], &mut recv, s));
        (rows, col, size)
    });
    for (rank, (rows, _, size)) in out.iter().enumerate() {
        assert_eq!(
            rows,
            &format!(
                "Comm::all_to_all_vc: the matrix's row (what it sends) of rank {rank} adds up to \
                 more than u64::MAX elements"
            )
        );
        assert_eq!(
            size,
            "Comm::all_to_all_vc: the matrix has 3 entries, not ranks² = 4"
        );
    }
    assert_eq!(
        out[0].1,
        "Comm::all_to_all_vc: the matrix's column (what it receives) of rank 0 adds up to more \
         than u64::MAX elements"
    );
}

#[test]
fn unsupported_reductions_fail_with_not_support_on_every_rank() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let out = threads(2, CommConfig::default(), |comm, _dev, s| {
        let mut buf = s.alloc_zeros::<u32>(4).unwrap();
        comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, s)
            .unwrap_err()
    });
    for e in out {
        assert_eq!(e.code(), Some(ErrorCode::NotSupport));
        assert!(e.to_string().starts_with("HcclAllReduce failed with HCCL_E_NOT_SUPPORT (5): HcclAllReduce: reductions of uint32"), "{e}");
    }
}

#[test]
fn init_all_gives_one_comm_per_device_usable_from_one_thread() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let rt = runtime();
    let devs = [Device::new(&rt, 0).unwrap(), Device::new(&rt, 1).unwrap()];
    let comms = Comm::init_all(&devs).unwrap();
    assert_eq!(
        comms
            .iter()
            .map(|c| (c.rank(), c.size()))
            .collect::<Vec<_>>(),
        [(0, 2), (1, 2)]
    );
    let streams: Vec<_> = devs.iter().map(|d| d.new_stream().unwrap()).collect();
    let mut bufs: Vec<_> = streams
        .iter()
        .zip([1i32, 2])
        .map(|(s, v)| s.clone_from_host(&[v; 3]).unwrap())
        .collect();
    // Collectives are asynchronous: one thread queues both ranks' parts.
    for ((c, s), b) in comms.iter().zip(&streams).zip(&mut bufs) {
        c.all_reduce_in_place(b, ReduceOp::Sum, s).unwrap();
    }
    for b in &bufs {
        assert_eq!(b.to_host_vec().unwrap(), [3, 3, 3]);
    }
    assert_eq!(
        invalid(Comm::init_all(&[devs[0].clone(), devs[0].clone()]).map(|_| ())),
        "Comm::init_all: device 0 is listed twice"
    );
    for c in comms {
        c.close().unwrap();
    }
}

#[test]
fn rank_tables_create_communicators_and_bad_ones_are_named() {
    let _serial = serial();
    let ports: Vec<u16> = (0..3)
        .map(|_| hccl::launch::free_port("127.0.0.1").unwrap())
        .collect();
    let table = RankTable::local(3, &ports);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.json");
    std::fs::write(&path, table.to_json()).unwrap();
    let rt = runtime();
    let hs: Vec<_> = (0..3u32)
        .map(|r| {
            let (rt, path) = (rt.clone(), path.clone());
            std::thread::spawn(move || {
                let dev = Device::new(&rt, r).unwrap();
                let comm =
                    Comm::init_cluster_info(&dev, &path, r, &CommConfig::default().name("table"))
                        .unwrap();
                let s = dev.new_stream().unwrap();
                let mut b = s.clone_from_host(&[r as i64; 2]).unwrap();
                comm.all_reduce_in_place(&mut b, ReduceOp::Max, &s).unwrap();
                (comm.name().unwrap(), b.to_host_vec().unwrap())
            })
        })
        .collect();
    for h in hs {
        assert_eq!(h.join().unwrap(), ("table".to_string(), vec![2, 2]));
    }
    let dev = Device::new(&rt, 0).unwrap();
    let e = Comm::init_cluster_info(&dev, &path, 3, &CommConfig::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "rank table {}: rank 3 is not in the table (3 ranks)",
            path.display()
        )
    );
    std::fs::write(&path, table.to_json().replace("\"2\"", "\"1\"")).unwrap();
    let e = Comm::init_cluster_info(&dev, &path, 0, &CommConfig::default()).unwrap_err();
    assert!(
        matches!(&e, Error::RankTable { reason, .. } if reason.contains("appears twice")),
        "{e}"
    );
}

#[test]
fn sub_communicators_of_even_and_odd_ranks_reduce_separately() {
    cann_sim::require_devices!(4);
    let _serial = serial();
    let out = threads(4, CommConfig::default(), |comm, _dev, s| {
        let r = comm.rank();
        let members: Vec<u32> = (0..4).filter(|x| x % 2 == r % 2).collect();
        let sub = comm
            .sub_comm(&members, u64::from(r % 2), &CommConfig::default())
            .unwrap();
        let mut b = s.clone_from_host(&[r as i32]).unwrap();
        sub.all_reduce_in_place(&mut b, ReduceOp::Sum, s).unwrap();
        let not_member = comm
            .sub_comm(&[(r + 1) % 4], 9, &CommConfig::default())
            .unwrap_err();
        (
            sub.rank(),
            sub.size(),
            b.to_host_vec().unwrap()[0],
            not_member.to_string(),
        )
    });
    assert_eq!(out[0].0..=out[0].1, 0..=2);
    assert_eq!(out.iter().map(|o| o.2).collect::<Vec<_>>(), [2, 4, 2, 4]);
    assert_eq!(out[1].3, "Comm::sub_comm: this rank (1) is not in [2]");
}

#[test]
fn suspended_communicators_refuse_collectives_until_resumed() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let out = threads(2, CommConfig::default(), |comm, _dev, s| {
        let mut b = s.clone_from_host(&[1.0f32; 4]).unwrap();
        comm.suspend().unwrap();
        let refused = comm
            .all_reduce_in_place(&mut b, ReduceOp::Sum, s)
            .unwrap_err()
            .code();
        comm.resume().unwrap();
        comm.all_reduce_in_place(&mut b, ReduceOp::Sum, s).unwrap();
        (
            refused,
            b.to_host_vec().unwrap()[0],
            comm.async_error().unwrap(),
        )
    });
    for o in out {
        assert_eq!(o, (Some(ErrorCode::Suspending), 2.0, None));
    }
}

#[test]
fn mismatched_counts_surface_at_synchronize_and_in_async_error() {
    cann_sim::sim_only!("relies on the simulator's cross-rank count check (a cann-sim diagnostic)");
    let _serial = serial();
    let out = threads(
        3,
        CommConfig::default().exec_timeout(Duration::from_secs(10)),
        |comm, _dev, s| {
            let n = if comm.rank() == 2 { 3 } else { 4 };
            let mut b = s.alloc_zeros::<i32>(n).unwrap();
            comm.all_reduce_in_place(&mut b, ReduceOp::Sum, s).unwrap();
            let sync = s.synchronize().unwrap_err();
            (sync.code().map(|c| c.raw()), comm.async_error().unwrap())
        },
    );
    for o in out {
        assert_eq!(o, (Some(507057), Some(ErrorCode::Para)));
    }
}

#[test]
fn comms_are_destroyed_on_drop_without_release_errors() {
    cann_sim::require_devices!(2);
    let _serial = serial();
    let _ = hccl::take_release_errors();
    threads(2, CommConfig::default(), |comm, _, _| comm.rank());
    assert!(hccl::take_release_errors().is_empty());
}

#[test]
fn root_info_text_survives_a_round_trip_through_the_environment() {
    let rt = runtime();
    let root = RootInfo::for_device(&acl::Device::new(&rt, 0).unwrap()).unwrap();
    let text = root.to_text();
    assert!(text.len() < 200, "{text}");
    assert_eq!(text.parse::<RootInfo>().unwrap(), root);
    assert_eq!(RootInfo::from_bytes(root.as_bytes()).unwrap(), root);
}

//! Every collective × element type × reduce op, for 1, 2, 3, 4 and 8 ranks
//! as threads of this process (reading each other's device memory directly,
//! the simulator's same-host links): exact results, and `HCCL_E_NOT_SUPPORT`
//! for the pairs Atlas A2 does not reduce. The TCP path between ranks of
//! one host is covered by `collectives_tcp.rs` and the multi-process tests.

mod common;

use acl::{Device, Stream};
use common::{matrix, threads};
use hccl::{Comm, CommConfig};
use std::time::Duration;

fn run_with(n: u32, body: fn(&Comm, &Device, &Stream) -> Result<usize, String>, min: usize) {
    let _serial = common::serial();
    let config = CommConfig::default().exec_timeout(Duration::from_secs(20));
    let results = threads(n, config, body);
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Ok(checks) => assert!(checks >= min, "rank {rank}: only {checks} checks"),
            Err(e) => panic!("rank {rank} of {n}: {e}"),
        }
    }
}

fn run(n: u32) {
    run_with(n, matrix, 100);
}

#[test]
fn float_sums_add_in_ring_order_on_direct_links() {
    for n in [2, 3, 4] {
        run_with(n, |c, d, s| common::ring_order_sum(c, d, s).map(|()| 1), 1);
    }
}

#[test]
fn megabyte_collectives_are_exact_on_3_thread_ranks() {
    run_with(3, common::large, 20);
}

#[test]
fn every_collective_type_and_op_is_exact_on_1_rank() {
    run(1);
}

#[test]
fn every_collective_type_and_op_is_exact_on_2_thread_ranks() {
    run(2);
}

#[test]
fn every_collective_type_and_op_is_exact_on_3_thread_ranks() {
    run(3);
}

#[test]
fn every_collective_type_and_op_is_exact_on_4_thread_ranks() {
    run(4);
}

#[test]
fn every_collective_type_and_op_is_exact_on_8_thread_ranks() {
    run(8);
}

#[test]
fn a_send_then_a_receive_pair_with_a_batch_that_sends_first_without_deadlock() {
    cann_sim::require_devices!(2);
    use hccl::P2pOp;
    let _serial = common::serial();
    let config = CommConfig::default().exec_timeout(Duration::from_secs(10));
    let out = threads(2, config, |comm, _, s| {
        let mine = s.clone_from_host(&[comm.rank() as i32 + 1; 64]).unwrap();
        let mut got = s.alloc_zeros::<i32>(64).unwrap();
        if comm.rank() == 0 {
            // Two calls: the send must complete before the receive starts.
            comm.send(&mine, 1, s).unwrap();
            comm.recv(&mut got, 1, s).unwrap();
        } else {
            // One batch whose send waits for rank 0's receive.
            let mut ops = [P2pOp::recv(&mut got, 0), P2pOp::send(&mine, 0)];
            comm.batch_send_recv(&mut ops, s).unwrap();
        }
        s.synchronize().map_err(|e| e.to_string())?;
        got.to_host_vec().map_err(|e| e.to_string())
    });
    assert_eq!(out[0].as_deref(), Ok(&[2; 64][..]), "{out:?}");
    assert_eq!(out[1].as_deref(), Ok(&[1; 64][..]), "{out:?}");
}

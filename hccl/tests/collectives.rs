//! Every collective × element type × reduce op, for 1, 2, 3, 4 and 8 ranks
//! as threads of this process (over loopback TCP in the simulator): exact
//! results, and `HCCL_E_NOT_SUPPORT` for the pairs Atlas A2 does not reduce.

mod common;

use common::{matrix, threads};
use hccl::CommConfig;
use std::time::Duration;

fn run(n: u32) {
    let _serial = common::serial();
    let config = CommConfig::default().exec_timeout(Duration::from_secs(20));
    let results = threads(n, config, matrix);
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Ok(checks) => assert!(checks > 100, "rank {rank}: only {checks} checks"),
            Err(e) => panic!("rank {rank} of {n}: {e}"),
        }
    }
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

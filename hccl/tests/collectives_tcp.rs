//! The collective matrix on 2, 3, 4 and 8 thread ranks with
//! `HCCL_INTRA_ROCE_ENABLE=1`:
//! ranks of one host exchange data over the simulator's TCP mesh (its
//! "RoCE"), as ranks on different hosts do, instead of reading each other's
//! memory. One test per binary: the variable is set before any thread runs.

mod common;

use common::{matrix, threads};
use hccl::CommConfig;
use std::time::Duration;

#[test]
fn every_collective_is_exact_and_float_sums_add_in_ring_order_over_tcp() {
    // SAFETY: the only test of this binary sets the variable before it
    // starts any thread, so nothing reads the environment concurrently.
    unsafe { std::env::set_var("HCCL_INTRA_ROCE_ENABLE", "1") };
    for n in [2, 3, 4, 8] {
        let config = CommConfig::default().exec_timeout(Duration::from_secs(20));
        let order = threads(n, config.clone(), common::ring_order_sum);
        assert!(order.iter().all(Result::is_ok), "{order:?}");
        for (rank, r) in threads(n, config, matrix).into_iter().enumerate() {
            match r {
                Ok(checks) => assert!(checks > 100, "rank {rank}: only {checks} checks"),
                Err(e) => panic!("rank {rank} of {n}: {e}"),
            }
        }
    }
}

//! The train_ddp example trains on 2 and 3 ranks (processes it launches
//! itself): every rank ends with rank 0's weights, and the loss matches
//! single-rank training on the whole data (the example checks both and
//! fails otherwise; this test checks its report too).

use std::path::PathBuf;
use std::process::Command;

fn example() -> PathBuf {
    // target/<profile>/deps/<this test> → target/<profile>/examples/train_ddp
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let bin = dir.join("examples").join("train_ddp");
    assert!(
        bin.exists(),
        "{} is not built (cargo test builds examples)",
        bin.display()
    );
    bin
}

#[test]
fn data_parallel_ranks_agree_with_each_other_and_with_single_rank_training() {
    for n in ["2", "3"] {
        let out = Command::new(example())
            .args(["-n", n])
            .env("CANN_BACKEND", "sim")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "train_ddp -n {n} failed\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ranks: usize = n.parse().unwrap();
        assert_eq!(
            text.matches("weights equal rank 0's: true").count(),
            ranks,
            "{text}"
        );
        assert!(text.contains("weights identical on every rank"), "{text}");
    }
}

#[test]
fn bad_rank_count_is_a_usage_error() {
    let out = Command::new(example())
        .args(["-n", "zero"])
        .env("CANN_BACKEND", "sim")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-n zero: not a number"));
}

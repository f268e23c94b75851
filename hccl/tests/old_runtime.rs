//! `hccl::CommConfig` for an HCCL older than CANN 8.5.0: its
//! `HcclCommConfigInit` writes explicit defaults (buffer 200 MiB, not
//! deterministic), which such a library expects instead of the newer "not
//! set" sentinels (docs/COMPAT.md, "Findings"). The simulator presents the
//! older runtime (`CANN_SIM_ACL_VERSION`), in a child process.

use std::process::Command;

#[test]
#[ignore = "run by a_config_for_an_older_hccl_carries_that_releases_defaults in a child"]
fn child_config_for_acl_1_12() {
    cann_sim::install().unwrap();
    let c = hccl::CommConfig::default().to_raw().unwrap();
    assert_eq!((c.hcclBufferSize, c.hcclDeterministic), (200, 0));
    // What the user sets is written as given.
    let c = hccl::CommConfig::default()
        .buffer_size_mib(64)
        .deterministic(true)
        .to_raw()
        .unwrap();
    assert_eq!((c.hcclBufferSize, c.hcclDeterministic), (64, 1));
}

#[test]
fn a_config_for_an_older_hccl_carries_that_releases_defaults() {
    cann_sim::sim_only!("presents an older runtime through the simulator (CANN_SIM_ACL_VERSION)");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_config_for_acl_1_12", "--include-ignored"])
        .env("CANN_SIM_ACL_VERSION", "1.12")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The newest runtime keeps the "not set" sentinels.
    cann_sim::install().unwrap();
    let c = hccl::CommConfig::default().to_raw().unwrap();
    assert_eq!(
        (c.hcclBufferSize, c.hcclDeterministic),
        (u32::MAX, u32::MAX)
    );
}
